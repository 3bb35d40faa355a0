/* global Stripe, window, document, fetch, URLSearchParams */
// The hosted checkout's Payment Element page (src/checkout/element.ts). Loaded after Stripe.js;
// everything it needs is in the form's data attributes. The card goes from Stripe's element to
// Stripe: this script only sees Stripe's answers, never the card.
(function () {
  'use strict';
  var form = document.getElementById('payment-form');
  var message = document.getElementById('payment-message');
  var button = document.getElementById('pay-button');
  var email = document.getElementById('email');
  var emailError = document.getElementById('email-error');
  if (!form || !message || !button || !email || !emailError) return;

  var GENERIC = 'Something went wrong. Nothing was charged. Please try again.';
  var label = button.textContent;

  function show(text) {
    message.textContent = text || '';
  }
  function busy(on) {
    button.disabled = on;
    button.textContent = on ? 'Processing…' : label;
    form.setAttribute('aria-busy', on ? 'true' : 'false');
  }
  function emailProblem(text) {
    emailError.textContent = text || '';
    if (text) email.setAttribute('aria-invalid', 'true');
    else email.removeAttribute('aria-invalid');
  }

  if (typeof Stripe !== 'function') {
    show('The payment form could not be loaded. Check your connection and reload the page.');
    return;
  }

  var data = form.dataset;
  var stripe = Stripe(data.publishableKey);
  var elements = stripe.elements({ clientSecret: data.clientSecret });
  var element = elements.create('payment', { layout: 'tabs', fields: { billingDetails: { email: 'never' } } });
  element.on('ready', function () {
    button.disabled = false;
  });
  element.mount('#payment-element');

  /** Transaction 1 on our side: the attempt is recorded before the browser confirms with Stripe. */
  async function prepare() {
    var body = new URLSearchParams({ _csrf: data.csrf, email: email.value });
    var res = await fetch(data.prepareUrl, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: body,
    });
    try {
      return await res.json();
    } catch {
      return { error: GENERIC };
    }
  }

  form.addEventListener('submit', async function (event) {
    event.preventDefault();
    if (button.disabled) return;
    show('');
    emailProblem('');
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.value.trim())) {
      emailProblem('Enter a valid email address.');
      email.focus();
      return;
    }
    busy(true);
    try {
      // Stripe checks the card fields first, so that a typo never records an attempt.
      var submitted = await elements.submit();
      if (submitted.error) {
        show(submitted.error.message || GENERIC);
        return busy(false);
      }
      var ready = await prepare();
      if (ready.redirect) {
        window.location.assign(ready.redirect);
        return;
      }
      if (!ready.ok) {
        if (ready.field === 'email') {
          emailProblem(ready.error);
          email.focus();
        } else show(ready.error || GENERIC);
        return busy(false);
      }
      var result = await stripe.confirmPayment({
        elements: elements,
        confirmParams: { return_url: data.returnUrl, payment_method_data: { billing_details: { email: email.value.trim() } } },
      });
      // Only an error comes back here: a success or a 3-D Secure redirect leaves the page for return_url.
      var err = result && result.error;
      show(err && (err.type === 'card_error' || err.type === 'validation_error') && err.message ? err.message : GENERIC);
      busy(false);
    } catch {
      show(GENERIC);
      busy(false);
    }
  });
})();
