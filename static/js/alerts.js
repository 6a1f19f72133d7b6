// Telling a player who left the tab: the page title shows the unread count, and when the
// queue pairs them while the tab is in the background, the title says so and (if they
// allowed it) the browser shows a notification. No inline script: the site's CSP forbids it.
(function () {
  "use strict";
  var baseTitle = document.title.replace(/^(\(\d+\)|● Paired!) /, "");
  var paired = false; // paired while the tab was hidden, and not looked at since
  var told = null; // the match page of the last pairing alerted

  function unread() {
    var bell = document.querySelector(".bell[data-unread]");
    return bell ? parseInt(bell.getAttribute("data-unread"), 10) || 0 : 0;
  }

  function showTitle() {
    var count = unread();
    var prefix = paired && document.hidden ? "● Paired! " : count ? "(" + count + ") " : "";
    document.title = prefix + baseTitle;
  }

  function browserAlert(panel) {
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    var opponent = panel.getAttribute("data-opponent") || "an opponent";
    var alert = new Notification("Paired: you play " + opponent, {
      body: "Press Ready within the ready check, then play and report the result.",
      tag: "ladder-paired",
    });
    alert.onclick = function () {
      window.focus();
      window.location.href = panel.getAttribute("data-paired");
      alert.close();
    };
  }

  function permissionControls() {
    document.querySelectorAll("[data-browser-alerts]:not([data-ready])").forEach(function (box) {
      if (!("Notification" in window)) {
        box.classList.add("unsupported");
        return;
      }
      box.setAttribute("data-ready", "");
      var button = box.querySelector("[data-ask-permission]");
      var state = box.querySelector("[data-permission-state]");
      function render() {
        var granted = Notification.permission === "granted";
        var denied = Notification.permission === "denied";
        button.hidden = granted || denied;
        state.textContent = granted
          ? "This browser alerts you when you are paired while the tab is in the background."
          : denied
            ? "Browser alerts are blocked for this site; allow them in the browser's site settings."
            : "";
      }
      box.hidden = false;
      button.addEventListener("click", function () {
        Notification.requestPermission().then(render);
      });
      render();
    });
  }

  document.addEventListener("htmx:afterSwap", function () {
    var panel = document.querySelector("#queue-panel [data-paired]");
    var match = panel && panel.getAttribute("data-paired");
    if (match && match !== told && document.hidden) {
      told = match; // once per pairing
      paired = true;
      browserAlert(panel);
    }
    permissionControls();
    showTitle();
  });
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) paired = false;
    showTitle();
  });
  document.addEventListener("DOMContentLoaded", function () {
    permissionControls();
    showTitle();
  });
})();
