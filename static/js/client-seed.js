// Fill each empty client seed field with 16 random bytes from the browser
// (rollog/v1 §3.3) and keep a receipt before sending, so the server cannot
// choose the dice alone and a roll that never appears can be noticed.
// Without JavaScript the server makes the seed and the roll says so.
// Fields: the free roll's `client_seed`, and every input marked
// `data-client-seed` (the post form's roll rows, a roll request's answer).
(function () {
  "use strict";
  if (!window.crypto || !crypto.getRandomValues) return;
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const value = (form, name) => (form.elements[name] ? form.elements[name].value : "");

  function receipt(form, input) {
    // A post form's row "tirada-0-client_seed" has "tirada-0-purpose" beside it.
    const prefix = input.name.slice(0, input.name.length - "client_seed".length);
    const purpose = value(form, prefix + "purpose");
    // Unused rows roll nothing: no receipt for them.
    if (input.hasAttribute("data-client-seed") && input.name.endsWith("client_seed") && !purpose) return;
    try {
      const receipts = JSON.parse(localStorage.getItem("rollog-receipts") || "[]");
      if (!receipts.some((r) => r.client_seed === input.value)) {
        receipts.push({
          client_seed: input.value,
          page: location.pathname,
          spec: value(form, "notation") || "3d10",
          purpose: purpose,
          seen_head: value(form, "seen"),
          time: new Date().toISOString(),
        });
      }
      localStorage.setItem("rollog-receipts", JSON.stringify(receipts.slice(-200)));
    } catch (error) {
      // Storage may be full or disabled; the roll still works.
    }
  }

  function fill(root) {
    for (const input of root.querySelectorAll('input[name="client_seed"], input[data-client-seed]')) {
      // A form re-shown after an error keeps its seed: nothing was rolled with it.
      if (!input.value) input.value = hex(crypto.getRandomValues(new Uint8Array(16)));
      const form = input.form;
      if (!form || input.dataset.receiptBound) continue;
      input.dataset.receiptBound = "true";
      // htmx lets the submit event through before it sends the form itself.
      form.addEventListener("submit", () => receipt(form, input));
    }
  }

  fill(document);
  // The post form comes back by htmx after an error: fill its new fields too.
  document.body.addEventListener("htmx:load", (event) => fill(event.detail.elt));
})();
