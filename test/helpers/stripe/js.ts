/**
 * A stand-in for Stripe.js (https://js.stripe.com/v3/), served by the Stripe API stand-in
 * (`api.ts`) at `/v3/` and loaded by the hosted page through STRIPE_JS_URL: tests only. It keeps
 * the shape the page's script uses: `Stripe(pk)` → `elements({ clientSecret })` or, for payments
 * finalized on the server, `elements({ mode: 'payment', amount, currency, setupFutureUsage })` →
 * `create('payment')` → `mount(selector)`, `on('ready')`, `elements.submit()`, then either
 * `stripe.confirmPayment({ elements, confirmParams: { return_url } })` or
 * `stripe.createConfirmationToken({ elements, params })` (a `ctoken_…` the server confirms with) and
 * `stripe.handleNextAction({ clientSecret })` (3-D Secure of an intent the server confirmed).
 *
 * Unlike Stripe's element, which is an iframe of js.stripe.com, the card input is rendered inline
 * in the mount point (a labelled "Card number" input): the page's script never reads it, and the
 * typed number is posted by this file to the stand-in API's confirm endpoint, never to the service.
 * A 3-D Secure card answers requires_action; the stand-in then shows its own challenge (Stripe's is
 * a hooks.stripe.com frame) with "Complete authentication" and "Fail authentication".
 */
export const STRIPE_JS_SOURCE = String.raw`(function () {
  'use strict';
  var api = new URL(document.currentScript.src).origin;
  var AUTH_FAILED = 'We are unable to authenticate your payment method. Please choose a different payment method and try again.';

  function form(params) {
    return Object.keys(params).map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(params[k]); }).join('&');
  }
  async function call(pk, path, params) {
    var res = await fetch(api + path, {
      method: 'POST',
      headers: { authorization: 'Bearer ' + pk, 'content-type': 'application/x-www-form-urlencoded' },
      body: form(params),
    });
    return res.json();
  }
  function intentOf(secret) { return secret.split('_secret_')[0]; }
  function errorOf(pi) {
    var e = pi.last_payment_error || {};
    return { type: e.type || 'card_error', code: e.code || 'card_declined', decline_code: e.decline_code, message: e.message || 'Your card was declined.' };
  }

  /** The challenge a 3-D Secure card asks for: resolves 'complete' or 'fail' with the payer's choice. */
  function challenge() {
    return new Promise(function (resolve) {
      var box = document.createElement('div');
      box.setAttribute('role', 'dialog');
      box.setAttribute('aria-modal', 'true');
      box.setAttribute('aria-labelledby', 'stripe-standin-3ds-title');
      box.className = 'alert info stack';
      var h = document.createElement('h2');
      h.id = 'stripe-standin-3ds-title';
      h.textContent = '3-D Secure (Stripe.js stand-in)';
      box.appendChild(h);
      [['complete', 'Complete authentication', 'btn'], ['fail', 'Fail authentication', 'btn danger']].forEach(function (b) {
        var button = document.createElement('button');
        button.type = 'button';
        button.className = b[2];
        button.textContent = b[1];
        button.addEventListener('click', function () { box.remove(); resolve(b[0]); });
        box.appendChild(button);
      });
      document.querySelector('main').prepend(box);
      box.querySelector('button').focus();
    });
  }

  function Elements(pk, options) {
    var input = null;
    if (!options.clientSecret && options.mode !== 'payment') throw new Error('elements(): a clientSecret or mode "payment" is required');
    if (options.mode && (!(options.amount > 0) || !options.currency)) throw new Error('elements(): mode "payment" needs an amount and a currency');
    this.clientSecret = options.clientSecret;
    this.setupFutureUsage = options.setupFutureUsage || null;
    this.cardNumber = function () { return input ? input.value.replace(/[\s-]/g, '') : ''; };
    this.create = function (type) {
      if (type !== 'payment') throw new Error('the stand-in knows the payment element only');
      var handlers = {};
      return {
        on: function (event, fn) { handlers[event] = fn; },
        mount: function (selector) {
          var at = typeof selector === 'string' ? document.querySelector(selector) : selector;
          var label = document.createElement('label');
          label.htmlFor = 'stripe-standin-card-number';
          label.textContent = 'Card number';
          input = document.createElement('input');
          input.id = 'stripe-standin-card-number';
          input.inputMode = 'numeric';
          input.autocomplete = 'cc-number';
          input.placeholder = '1234 1234 1234 1234';
          at.replaceChildren(label, input);
          setTimeout(function () { if (handlers.ready) handlers.ready({ elementType: 'payment' }); }, 0);
        },
      };
    };
    this.submit = async function () {
      var n = this.cardNumber();
      this.submitted = false;
      if (!/^\d{12,19}$/.test(n)) return { error: { type: 'validation_error', code: 'incomplete_number', message: 'Your card number is incomplete.' } };
      this.submitted = true;
      return {};
    };
  }

  window.Stripe = function (pk) {
    if (!pk) throw new Error('Stripe(): a publishable key is required');
    return {
      elements: function (options) { return new Elements(pk, options || {}); },
      createConfirmationToken: async function (args) {
        var els = args.elements;
        if (!els.submitted) throw new Error('createConfirmationToken(): call elements.submit() first');
        var params = args.params || {};
        var billing = (params.payment_method_data && params.payment_method_data.billing_details) || {};
        var body = { 'payment_method_data[card][number]': els.cardNumber() };
        if (billing.email) body['payment_method_data[billing_details][email]'] = billing.email;
        if (params.return_url) body.return_url = params.return_url;
        if (els.setupFutureUsage) body.setup_future_usage = els.setupFutureUsage;
        var ct = await call(pk, '/v1/confirmation_tokens', body);
        if (ct.error) return { error: ct.error };
        return { confirmationToken: ct };
      },
      handleNextAction: async function (args) {
        var secret = args && args.clientSecret;
        if (!secret) throw new Error('handleNextAction(): clientSecret is required');
        var id = intentOf(secret);
        var outcome = await challenge();
        var pi = await call(pk, '/v1/payment_intents/' + id + '/authenticate', { client_secret: secret, outcome: outcome });
        if (pi.error) return { error: pi.error };
        if (pi.status === 'requires_payment_method') {
          return { error: { type: 'card_error', code: 'payment_intent_authentication_failure', message: AUTH_FAILED, payment_intent: pi } };
        }
        return { paymentIntent: pi };
      },
      confirmPayment: async function (args) {
        var els = args.elements;
        var returnUrl = args.confirmParams && args.confirmParams.return_url;
        if (!returnUrl) throw new Error('confirmPayment(): return_url is required');
        var id = intentOf(els.clientSecret);
        var pi = await call(pk, '/v1/payment_intents/' + id + '/confirm', {
          client_secret: els.clientSecret,
          'payment_method_data[card][number]': els.cardNumber(),
          return_url: returnUrl,
        });
        if (pi.error) return { error: pi.error };
        if (pi.status === 'requires_action') {
          var outcome = await challenge();
          pi = await call(pk, '/v1/payment_intents/' + id + '/authenticate', { client_secret: els.clientSecret, outcome: outcome });
          if (pi.error) return { error: pi.error };
          if (pi.status === 'requires_payment_method') {
            return { error: { type: 'card_error', code: 'payment_intent_authentication_failure', message: AUTH_FAILED } };
          }
        }
        if (pi.status === 'requires_payment_method') return { error: errorOf(pi) };
        var u = new URL(returnUrl);
        u.searchParams.set('payment_intent', id);
        u.searchParams.set('payment_intent_client_secret', els.clientSecret);
        u.searchParams.set('redirect_status', pi.status === 'succeeded' ? 'succeeded' : 'pending');
        window.location.assign(u.toString());
        return new Promise(function () {}); // the page is leaving, as Stripe.js's does
      },
    };
  };
})();
`;
