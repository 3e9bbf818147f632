// Live refresh: every data-refresh ms, fetch this page again and swap its
// content in place (no reload, no framework). It pauses while the tab is
// hidden or a form field has focus, so it never eats what is being typed.
// It fetches this very address, so a paged list stays on its page
// (?journal_page=, ?mailbox_page=), and it keeps the scroll position.
(function () {
  var live = document.getElementById("live");
  var every = live && parseInt(live.dataset.refresh, 10);
  if (!every) return;
  function busy() {
    var a = document.activeElement;
    return document.hidden || (a && (a.tagName === "INPUT" || a.tagName === "SELECT" || a.tagName === "TEXTAREA"));
  }
  function tick() {
    if (busy()) return setTimeout(tick, every);
    fetch(location.href, { credentials: "same-origin", headers: { "X-Live-Refresh": "1" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html) {
          var next = new DOMParser().parseFromString(html, "text/html").getElementById("live");
          if (next && !busy()) {
            var x = window.scrollX, y = window.scrollY;
            live.innerHTML = next.innerHTML;
            window.scrollTo(x, y);
            live.dataset.refreshed = String(Date.now());
          }
        }
      })
      .catch(function () {})
      .then(function () { setTimeout(tick, every); });
  }
  setTimeout(tick, every);
})();
