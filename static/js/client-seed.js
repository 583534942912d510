// Fill each empty client seed field with 16 random bytes from the browser
// (rollog/v1 §3.3) and keep a receipt before sending, so the server cannot
// choose the dice alone and a roll that never appears can be noticed.
// Without JavaScript the server makes the seed and the roll says so.
// Fields: every input named `client_seed` and every input marked
// `data-client-seed` (the post form's roll rows, a roll request's answer,
// the re-rolls under a card: activations, pushes, conversions, settling a
// deadline).
//
// A receipt is {client_seed, campaign, page, spec, purpose, seen_head, time},
// kept in localStorage "rollog-receipts" (the last 200), one per seed:
// - campaign: the witness element's (templates/rolls/_witness.html), else
//   the form's data-receipt-campaign;
// - spec: the form's dice notation (`notation`, or the row's) or its
//   data-receipt-spec; empty when the page does not say;
// - purpose: the row's or form's purpose field, else the form's
//   data-receipt-purpose, else the text of the button that sent it;
// - seen_head: the form's `seen` field, else the head the witness checked.
// No receipt for a seed that rolls nothing: a post's unused roll row (its
// purpose empty), a seed whose data-receipt-if field is empty (the post's
// answer seed without a roll request answered).
//
// base.html loads this script on every page, and some pages load it again:
// the second copy does nothing.
(function () {
  "use strict";
  if (window.hitosClientSeed) return;
  window.hitosClientSeed = true;
  if (!window.crypto || !crypto.getRandomValues) return;

  const SEEDS = 'input[name="client_seed"], input[data-client-seed]';
  const STORE = "rollog-receipts";
  const KEEP = 200;
  // Seeds that roll only when another field of their form is filled.
  const RECEIPT_IF = { answer_seed: "answers" };
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const clean = (text) => (text || "").replace(/\s+/g, " ").trim();

  // A field's value by name ("" when the form has none); radio groups included.
  function value(form, name) {
    const field = form.elements.namedItem(name);
    return field && typeof field.value === "string" ? field.value : "";
  }
  const has = (form, name) => Boolean(form.elements.namedItem(name));

  function witness() {
    return document.querySelector("[data-rollog-witness]");
  }

  function sentBy(form, submitter) {
    if (submitter) return clean(submitter.value && submitter.tagName === "INPUT" ? submitter.value : submitter.textContent);
    const button = form.querySelector('button:not([type]), button[type="submit"], input[type="submit"]');
    return button ? clean(button.tagName === "INPUT" ? button.value : button.textContent) : "";
  }

  // The receipt of one seed sent with `form`, or null for a row that rolls nothing.
  function receiptFor(form, input, submitter) {
    // A post form's row "tirada-0-client_seed" has "tirada-0-purpose" beside it.
    const prefix = input.name.endsWith("client_seed") ? input.name.slice(0, -"client_seed".length) : "";
    const rowPurpose = prefix + "purpose";
    // Unused rows of a marked set roll nothing: no receipt for them.
    if (input.hasAttribute("data-client-seed") && has(form, rowPurpose) && !value(form, rowPurpose)) return null;
    // A seed used only with another field (data-receipt-if): a post's
    // answer seed rolls only when the post answers a roll request.
    const needed = input.dataset.receiptIf || RECEIPT_IF[input.name];
    if (needed && !value(form, needed)) return null;
    const box = witness();
    const spec = value(form, prefix + "notation") || value(form, "notation") || form.dataset.receiptSpec || "";
    const purpose =
      value(form, rowPurpose) || value(form, "purpose") || form.dataset.receiptPurpose || sentBy(form, submitter);
    return {
      client_seed: input.value,
      campaign: (box && box.dataset.campaign) || form.dataset.receiptCampaign || "",
      page: location.pathname,
      spec: spec,
      purpose: purpose,
      seen_head: value(form, prefix + "seen") || value(form, "seen") || (box && box.dataset.head) || "",
      time: new Date().toISOString(),
    };
  }

  function keep(receipts) {
    if (!receipts.length) return;
    try {
      const kept = JSON.parse(localStorage.getItem(STORE) || "[]");
      const list = Array.isArray(kept) ? kept : [];
      for (const receipt of receipts) {
        // A form sent again after an error sends the same seed: one receipt.
        if (!list.some((r) => r && r.client_seed === receipt.client_seed)) list.push(receipt);
      }
      localStorage.setItem(STORE, JSON.stringify(list.slice(-KEEP)));
    } catch (error) {
      // Storage may be full or disabled; the roll still works.
    }
  }

  function fill(root) {
    if (!root || !root.querySelectorAll) return;
    const inputs = Array.from(root.querySelectorAll(SEEDS));
    if (root.matches && root.matches(SEEDS)) inputs.push(root);
    for (const input of inputs) {
      // A form re-shown after an error keeps its seed: nothing was rolled with it.
      if (!input.value) input.value = hex(crypto.getRandomValues(new Uint8Array(16)));
    }
  }

  // Capture on the document: before htmx (listening on the form) sends it,
  // and for forms that arrive later by htmx too.
  document.addEventListener(
    "submit",
    (event) => {
      const form = event.target;
      if (!(form instanceof HTMLFormElement)) return;
      const receipts = [];
      for (const input of Array.from(form.elements)) {
        if (!(input instanceof HTMLInputElement) || input.disabled || !input.value || !input.matches(SEEDS)) continue;
        const receipt = receiptFor(form, input, event.submitter);
        if (receipt) receipts.push(receipt);
      }
      keep(receipts);
    },
    true,
  );

  fill(document);
  // Forms that come by htmx (an inline activation, a form back after an error): fill their fields too.
  document.addEventListener("htmx:load", (event) => fill(event.detail && event.detail.elt));
})();
