// The live "1,234 of 2,000 characters" under a comment box (textarea[data-counter][data-max]).
// No maxlength: a browser would cut a pasted text silently; the counter says "N too many" instead.
// Progressive: without it the server still refuses a comment that is too long, with a message.
(function () {
  "use strict";
  var numbers = new Intl.NumberFormat("en");

  function update(box, counter) {
    var most = parseInt(box.getAttribute("data-max"), 10) || 0;
    var length = box.value.length;
    var text = numbers.format(length) + " of " + numbers.format(most) + " characters";
    if (most && length > most) text += ": " + numbers.format(length - most) + " too many";
    counter.textContent = text;
    counter.classList.toggle("over", most > 0 && length > most);
  }

  function start() {
    document.querySelectorAll("textarea[data-counter]").forEach(function (box) {
      var counter = document.getElementById(box.getAttribute("data-counter"));
      if (!counter) return;
      box.addEventListener("input", function () {
        update(box, counter);
      });
      update(box, counter);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
