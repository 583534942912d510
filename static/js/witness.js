// The browser as a witness of the campaign's roll log (rollog/v1 §3.8).
//
// On every page of a campaign (an element [data-rollog-witness], from
// templates/rolls/_witness.html) the browser asks the log's head
// (data-head-url → {campaign, seq, head}) and compares it with the last head
// it kept for the campaign in localStorage "rollog-witness"
// ({<campaign id>: {campaign, seq, head, time}}):
// - nothing kept yet: it keeps this one;
// - the same head: nothing to do;
// - a later head: it walks the export (data-export-url?desde=<kept seq>,
//   following `next`) and checks that it starts with the kept entry (same
//   seq, same hash), that every entry links to the one before (`prev`, seq
//   + 1) and that it reaches the new head; then it keeps the new head;
// - anything else (a lower seq, another hash for the kept entry, a broken
//   link, an export that stops short of the head): the red warning, and the
//   old head stays kept, whatever later visits are shown.
// Network errors and answers that are not JSON leave everything as it was
// (nothing shown, nothing kept). A walk longer than MAX_PAGES pages keeps
// the last entry it checked (it extends the kept head as well) and goes on
// from there on the next visit.
//
// The element's data-witness says how the last check ended ("kept",
// "same", "extended", "fork", "later", "none" without a log, "offline");
// data-head carries the head checked, for client-seed.js receipts, and it
// fills empty `seen` fields (input[name=seen], input[data-seen]) with it.
// The warning's text comes translated in the page; this script only fills
// in the date, the entry number and the first 16 hex digits of the head.
(function () {
  "use strict";
  const box = document.querySelector("[data-rollog-witness]");
  if (!box || !window.fetch || !window.crypto || !crypto.subtle || !window.TextDecoder) return;

  const STORE = "rollog-witness";
  const MAX_PAGES = 20;
  const ENTRY_TAG = new TextEncoder().encode("rollog/v1/entry\n");
  const HEX64 = /^[0-9a-f]{64}$/;
  const decoder = new TextDecoder("utf-8", { fatal: true });

  // The log does not extend the kept head: the warning.
  class Fork extends Error {}
  // Nothing could be checked now (network, server error, not JSON): silence.
  class Quiet extends Error {}

  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const isSeq = (value) => Number.isSafeInteger(value) && value >= 0;

  function readStore() {
    try {
      const kept = JSON.parse(localStorage.getItem(STORE) || "{}");
      return kept && typeof kept === "object" && !Array.isArray(kept) ? kept : {};
    } catch (error) {
      return null;
    }
  }

  function keep(head) {
    const kept = readStore();
    if (kept === null) return;
    kept[box.dataset.campaignId] = { campaign: head.campaign, seq: head.seq, head: head.head, time: new Date().toISOString() };
    try {
      localStorage.setItem(STORE, JSON.stringify(kept));
    } catch (error) {
      // Storage full or disabled: this browser cannot witness.
    }
  }

  async function getJSON(path) {
    let response;
    try {
      response = await fetch(path, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } });
    } catch (error) {
      throw new Quiet();
    }
    if (!response.ok) throw new Quiet();
    try {
      return await response.json();
    } catch (error) {
      throw new Quiet();
    }
  }

  // An export's entry: its seq, prev and campaign as signed, and its hash.
  async function open(ref) {
    if (!ref || typeof ref.entry_b64 !== "string") throw new Fork();
    let bytes;
    let entry;
    try {
      bytes = Uint8Array.from(atob(ref.entry_b64), (c) => c.charCodeAt(0));
      entry = JSON.parse(decoder.decode(bytes));
    } catch (error) {
      throw new Fork();
    }
    if (!entry || typeof entry !== "object" || !isSeq(entry.seq)) throw new Fork();
    const tagged = new Uint8Array(ENTRY_TAG.length + bytes.length);
    tagged.set(ENTRY_TAG);
    tagged.set(bytes, ENTRY_TAG.length);
    const hash = hex(new Uint8Array(await crypto.subtle.digest("SHA-256", tagged)));
    return { seq: entry.seq, prev: entry.prev, campaign: entry.campaign, hash: hash };
  }

  // The export's next page, asked of this site whatever host `next` names.
  function sameSite(next) {
    try {
      const url = new URL(next, location.href);
      return url.pathname + url.search;
    } catch (error) {
      throw new Quiet();
    }
  }

  // Walk the export from the kept entry to the head: true when it extends
  // the kept head up to `head`; when the walk is too long for one visit, the
  // last entry it checked (a head that extends the kept one too).
  async function walk(kept, head) {
    let path = `${box.dataset.exportUrl}?desde=${kept.seq}`;
    let last = null;
    for (let pages = 0; pages < MAX_PAGES && path; pages++) {
      const page = await getJSON(path);
      if (!page || typeof page !== "object" || !Array.isArray(page.entries)) throw new Quiet();
      for (const ref of page.entries) {
        const entry = await open(ref);
        if (entry.campaign !== head.campaign) throw new Fork();
        if (last === null) {
          // The first entry is the one kept, unchanged.
          if (entry.seq !== kept.seq || entry.hash !== kept.head) throw new Fork();
        } else if (entry.seq !== last.seq + 1 || entry.prev !== last.hash) {
          throw new Fork();
        }
        if (entry.seq === head.seq && entry.hash !== head.head) throw new Fork();
        last = entry;
      }
      path = typeof page.next === "string" && page.next ? sameSite(page.next) : null;
    }
    if (path) return last;
    // An export that stops before the head it announced hides entries.
    if (last === null || last.seq < head.seq) throw new Fork();
    return true;
  }

  function warn(kept) {
    const warning = box.querySelector("[data-witness-warning]");
    const seen = box.querySelector("[data-witness-seen]");
    const download = box.querySelector("[data-witness-export]");
    if (!warning) return;
    // The export from the kept entry on: what now stands where the kept head was.
    if (download) download.href = `${box.dataset.exportUrl}?desde=${kept.seq}`;
    if (seen) {
      let date = kept.time;
      try {
        date = new Date(kept.time).toLocaleString(document.documentElement.lang || undefined, {
          dateStyle: "long",
          timeStyle: "short",
        });
      } catch (error) {
        // An unknown language: the ISO time.
      }
      seen.textContent = (seen.dataset.text || "")
        .replace("{date}", date)
        .replace("{seq}", String(kept.seq))
        .replace("{head}", String(kept.head).slice(0, 16));
    }
    warning.hidden = false;
  }

  function fillSeen(head) {
    box.dataset.head = head;
    for (const input of document.querySelectorAll('input[name="seen"], input[data-seen]')) {
      if (!input.value) input.value = head;
    }
  }

  async function check() {
    const head = await getJSON(box.dataset.headUrl);
    // No log open yet: nothing to witness.
    if (!head || head.seq === null || head.seq === undefined) return "none";
    if (!isSeq(head.seq) || typeof head.head !== "string" || !HEX64.test(head.head)) throw new Quiet();
    const store = readStore();
    if (store === null) return "offline";
    const kept = store[box.dataset.campaignId];
    if (!kept || !isSeq(kept.seq) || typeof kept.head !== "string") {
      keep(head);
      fillSeen(head.head);
      return "kept";
    }
    try {
      if (kept.campaign && kept.campaign !== head.campaign) throw new Fork();
      if (head.seq < kept.seq || (head.seq === kept.seq && head.head !== kept.head)) throw new Fork();
      if (head.seq === kept.seq) {
        fillSeen(head.head);
        return "same";
      }
      const reached = await walk(kept, head);
      if (reached !== true) {
        if (reached && reached.seq > kept.seq) keep({ campaign: head.campaign, seq: reached.seq, head: reached.hash });
        return "later";
      }
    } catch (error) {
      if (error instanceof Fork) {
        warn(kept);
        return "fork";
      }
      throw error;
    }
    keep(head);
    fillSeen(head.head);
    return "extended";
  }

  check().then(
    (state) => {
      box.dataset.witness = state;
    },
    () => {
      box.dataset.witness = "offline";
    },
  );
})();
