/* global document, window */
// Passkeys on the dashboard (issue 25): the security page and the sign-in's second step. Each form
// marked data-passkey-register or data-passkey-sign-in carries the server's WebAuthn options in
// data-options; on submit the browser is asked (through @simplewebauthn/browser, served before
// this file), its answer goes into the form's hidden "credential" field, and the form is posted as
// any other. Without WebAuthn the forms stay hidden and the data-passkey-unsupported note shows.
(function () {
  'use strict';
  var lib = window.SimpleWebAuthnBrowser;
  var supported = !!(lib && lib.browserSupportsWebAuthn());
  Array.prototype.forEach.call(document.querySelectorAll('[data-passkey-unsupported]'), function (note) {
    note.hidden = supported;
  });
  if (!supported) return;

  function wire(form, ask) {
    var status = form.querySelector('[data-passkey-status]');
    var button = form.querySelector('button[type=submit]');
    var field = form.querySelector('input[name=credential]');
    var options = JSON.parse(form.getAttribute('data-options') || '{}');
    form.hidden = false;
    form.addEventListener('submit', function (e) {
      if (field.value) return; // the answer is in: post it
      e.preventDefault();
      if (status) status.textContent = '';
      button.disabled = true;
      ask({ optionsJSON: options }).then(
        function (answer) {
          field.value = JSON.stringify(answer);
          form.submit();
        },
        function (err) {
          button.disabled = false;
          if (status) {
            status.textContent =
              err && err.name === 'NotAllowedError'
                ? 'The passkey request was cancelled or timed out. Try again.'
                : 'The passkey did not work' + (err && err.message ? ': ' + err.message : '.');
          }
        },
      );
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll('form[data-passkey-register]'), function (form) {
    wire(form, lib.startRegistration);
  });
  Array.prototype.forEach.call(document.querySelectorAll('form[data-passkey-sign-in]'), function (form) {
    wire(form, lib.startAuthentication);
  });
})();
