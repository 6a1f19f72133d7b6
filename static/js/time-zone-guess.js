// Sign-up: the browser's IANA time zone into the form's hidden field (accounts.forms.SignUpForm).
// The server keeps it only if it knows the name; without it the account reads the site's zone.
(function () {
  "use strict";
  var zone = "";
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch (error) {
    return;
  }
  document.querySelectorAll("input[data-zone-guess]").forEach(function (input) {
    if (!input.value) input.value = zone;
  });
})();
