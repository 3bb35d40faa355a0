/* global document, navigator, window */
// The dashboard's one script (src/dashboard/layout.ts): Copy buttons. Each button carries the
// text to copy in data-copy and stays hidden without this script; the status next to it tells
// screen readers what happened. Nothing else on the dashboard needs a script.
(function () {
  'use strict';
  function fallbackCopy(text) {
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'sr-only';
    document.body.appendChild(area);
    area.select();
    var ok;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    document.body.removeChild(area);
    return ok;
  }
  function say(button, text) {
    var status = button.nextElementSibling;
    if (status && status.getAttribute('role') === 'status') status.textContent = text;
    button.textContent = text === 'Copied' ? 'Copied' : 'Copy';
    window.setTimeout(function () {
      button.textContent = 'Copy';
    }, 2000);
  }
  var buttons = document.querySelectorAll('button[data-copy]');
  Array.prototype.forEach.call(buttons, function (button) {
    button.hidden = false;
    button.addEventListener('click', function () {
      var text = button.getAttribute('data-copy') || '';
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(
          function () {
            say(button, 'Copied');
          },
          function () {
            say(button, fallbackCopy(text) ? 'Copied' : 'Select the text and copy it');
          },
        );
      } else {
        say(button, fallbackCopy(text) ? 'Copied' : 'Select the text and copy it');
      }
    });
  });
})();
