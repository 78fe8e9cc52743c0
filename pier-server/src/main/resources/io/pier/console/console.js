// Pier's web console: reloads the page's content in place every data-refresh-ms, so its tables
// and plots follow the broker without a full reload. Read-only: it only GETs the page it is on.
(function () {
  'use strict';
  var interval = parseInt(document.body.getAttribute('data-refresh-ms'), 10);
  var status = document.getElementById('refresh-status');
  if (!(interval > 0)) {
    return;
  }

  function show(text, stale) {
    if (status) {
      status.textContent = text;
      status.className = stale ? 'stale' : '';
    }
  }

  function refresh() {
    fetch(window.location.href, { cache: 'no-store', headers: { Accept: 'text/html' } })
      .then(function (response) {
        if (!response.ok) {
          throw new Error('HTTP ' + response.status);
        }
        return response.text();
      })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, 'text/html').getElementById('content');
        var current = document.getElementById('content');
        if (fresh && current) {
          current.replaceWith(document.importNode(fresh, true));
        }
        show('updated ' + new Date().toLocaleTimeString(), false);
      })
      .catch(function (e) {
        show('not updated: ' + e.message, true);
      })
      .then(function () {
        window.setTimeout(refresh, interval);
      });
  }

  window.setTimeout(refresh, interval);
})();
