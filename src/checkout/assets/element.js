/* global Stripe, window, document, fetch, URL, URLSearchParams */
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

  /** Stripe's own words for what the payer can fix (a card or form error); anything else is ours. */
  function payerMessage(err) {
    return err && (err.type === 'card_error' || err.type === 'validation_error') && err.message ? err.message : GENERIC;
  }

  if (typeof Stripe !== 'function') {
    show('The payment form could not be loaded. Check your connection and reload the page.');
    return;
  }

  var data = form.dataset;
  var stripe = Stripe(data.publishableKey);
  // Payments are finalized on the server (Stripe's "finalize payments on the server"): the element
  // runs without the intent's secret, on the session's amount and currency; the card becomes a
  // confirmation token that our server reads (the fraud rules see the card) and confirms with.
  var options = { mode: 'payment', amount: Number(data.amount), currency: data.currency };
  if (data.setupFutureUsage) options.setupFutureUsage = data.setupFutureUsage;
  var elements = stripe.elements(options);
  var element = elements.create('payment', { layout: 'tabs', fields: { billingDetails: { email: 'never' } } });
  element.on('ready', function () {
    button.disabled = false;
  });
  element.mount('#payment-element');

  /** Our server records the attempt, runs the fraud rules on the token's card and confirms with Stripe. */
  async function prepare(token) {
    var body = new URLSearchParams({ _csrf: data.csrf, email: email.value, confirmation_token: token });
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
      var made = await stripe.createConfirmationToken({
        elements: elements,
        params: { payment_method_data: { billing_details: { email: email.value.trim() } } },
      });
      if (made.error) {
        show(payerMessage(made.error));
        return busy(false);
      }
      var ready = await prepare(made.confirmationToken.id);
      if (ready.redirect) {
        window.location.assign(ready.redirect);
        return;
      }
      if (ready.next_action && ready.client_secret) {
        // 3-D Secure: Stripe.js shows the bank's challenge; the return page then records the outcome.
        var acted = await stripe.handleNextAction({ clientSecret: ready.client_secret });
        if (acted.error) {
          show(payerMessage(acted.error));
          return busy(false);
        }
        var back = new URL(data.returnUrl, window.location.href);
        back.searchParams.set('payment_intent', acted.paymentIntent.id);
        window.location.assign(back.toString());
        return;
      }
      if (ready.field === 'email') {
        emailProblem(ready.error);
        email.focus();
      } else show(ready.error || GENERIC);
      busy(false);
    } catch {
      show(GENERIC);
      busy(false);
    }
  });
})();
