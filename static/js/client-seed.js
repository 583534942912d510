// Fill each empty client_seed field with 16 random bytes from the browser
// (rollog/v1 §3.3) and keep a receipt before sending, so the server cannot
// choose the dice alone and a roll that never appears can be noticed.
// Without JavaScript the server makes the seed and the roll says so.
(function () {
  "use strict";
  if (!window.crypto || !crypto.getRandomValues) return;
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const value = (form, name) => (form.elements[name] ? form.elements[name].value : "");
  for (const input of document.querySelectorAll('input[name="client_seed"]')) {
    // A form re-shown after an error keeps its seed: nothing was rolled with it.
    if (!input.value) input.value = hex(crypto.getRandomValues(new Uint8Array(16)));
    const form = input.form;
    if (!form) continue;
    form.addEventListener("submit", function () {
      try {
        const receipts = JSON.parse(localStorage.getItem("rollog-receipts") || "[]");
        if (!receipts.some((r) => r.client_seed === input.value)) {
          receipts.push({
            client_seed: input.value,
            page: location.pathname,
            spec: value(form, "notation"),
            purpose: value(form, "purpose"),
            seen_head: value(form, "seen"),
            time: new Date().toISOString(),
          });
        }
        localStorage.setItem("rollog-receipts", JSON.stringify(receipts.slice(-200)));
      } catch (error) {
        // Storage may be full or disabled; the roll still works.
      }
    });
  }
})();
