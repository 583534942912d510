// The browser as a witness of the campaign's roll log (rollog/v1 §3.8;
// docs/verification.md, "Your browser as a witness").
//
// On every page of a campaign (an element [data-rollog-witness], from
// templates/rolls/_witness.html) the browser asks the log's head
// (data-head-url → {campaign, seq, head, public_key}) and compares it with
// what it kept for the campaign in localStorage "rollog-witness"
// ({<campaign id>: {campaign, seq, head, time, key, marks, audit, audited}}):
// - nothing kept yet: it keeps this head and pins the key (`key`);
// - another key than the pinned one, or none: the red warning;
// - the same head: nothing to walk;
// - a later head: it walks the export (data-export-url?desde=<kept seq>,
//   following `next`) from the kept entry (same seq, same hash) to the new
//   head, and keeps the new head;
// - a lower seq, or another hash for the kept entry: the red warning.
// What this step establishes is kept at once. Then, at most once a day, it
// walks the export again from entry 0 up to the kept head (`audited`: when
// that walk last got there; a time ahead of the clock counts as long ago),
// so that an older entry changed after it was seen is caught too; that walk
// keeps where it got after every page (`audit`) and goes on from there on
// the next visit if it stops (pages used up, network).
// Every entry a walk reads must carry a valid Ed25519 signature under the
// pinned key (static/js/rollog.js, as rolls/verify.py checks it), link to
// the one before it (seq + 1, `prev`), belong to the campaign, name the
// pinned key if it opens an epoch, and have the hash kept for its position:
// the hash of every MARK_EVERY-th entry checked is kept (`marks`). Anything
// else (a broken link or signature, an export that stops short of the entry
// it must reach, a page with no entries that names a next one, a walk that
// gets nowhere) brings the red warning, and nothing it did not check is
// kept. The warning names the head kept before this visit; on first sight,
// when nothing was kept, it says the log does not verify. A browser without
// Ed25519 in WebCrypto still walks the chain but says, in
// [data-witness-unsigned], that it cannot check the signatures. Network
// errors and answers that are not JSON show nothing and keep nothing more.
// One visit reads at most MAX_PAGES pages of export for both walks; a longer
// forward walk keeps the last entry it checked (it extends the kept head as
// well) and goes on from there on the next visit.
//
// The element's data-witness says how the last check ended ("kept",
// "same", "extended", "fork", "later", "none" without a log, "offline");
// data-signatures says whether they were checked ("checked", "unsupported");
// data-head carries the head checked, for client-seed.js receipts, and it
// fills empty `seen` fields (input[name=seen], input[data-seen]) with it.
// The warning's text comes translated in the page; this script only fills
// in the date, the entry number and the first 16 hex digits of the head.
(function () {
  "use strict";
  const box = document.querySelector("[data-rollog-witness]");
  if (!box || !window.fetch || !window.crypto || !crypto.subtle || !window.TextDecoder || !window.Rollog) return;

  const { HEX64, Refusal, isObject, open, pinnedKey } = window.Rollog;
  const STORE = "rollog-witness";
  const MAX_PAGES = 20;
  const MARK_EVERY = 64;
  const AUDIT_EVERY = 24 * 60 * 60 * 1000;
  const GENESIS = "0".repeat(64);

  // The log does not extend what was kept, or an entry is not what it claims: the warning.
  class Fork extends Error {}
  // Nothing could be checked now (network, server error, not JSON): silence.
  class Quiet extends Error {}

  const isSeq = (value) => Number.isSafeInteger(value) && value >= 0;
  const isPoint = (value) => isObject(value) && isSeq(value.seq) && typeof value.hash === "string";
  const isKey = (value) => typeof value === "string" && HEX64.test(value);
  const now = () => new Date().toISOString();

  function readStore() {
    try {
      const kept = JSON.parse(localStorage.getItem(STORE) || "{}");
      return isObject(kept) ? kept : {};
    } catch (error) {
      return null;
    }
  }

  // What was kept for the campaign, with defaults for what older versions of this script did not keep; null if none.
  function keptRecord(store) {
    const kept = store[box.dataset.campaignId];
    if (!isObject(kept) || !isSeq(kept.seq) || typeof kept.head !== "string") return null;
    const audit = isPoint(kept.audit) && kept.audit.seq <= kept.seq ? kept.audit : null;
    const marks = isObject(kept.marks) ? kept.marks : {};
    return { ...kept, key: isKey(kept.key) ? kept.key : null, marks: marks, audit: audit };
  }

  function keep(record) {
    const kept = readStore();
    if (kept === null) return;
    kept[box.dataset.campaignId] = record;
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

  // An export's entry, signed under the pinned key (unless this browser cannot
  // check Ed25519: ctx.key null) and of this campaign: its seq, prev and hash.
  async function checked(ctx, ref) {
    let signed;
    try {
      signed = await open(ref, ctx.key);
    } catch (error) {
      throw error instanceof Refusal ? new Fork() : error;
    }
    const entry = signed.entry;
    if (!isSeq(entry.seq) || entry.campaign !== ctx.campaign) throw new Fork();
    // Each epoch names the key its entries are signed with: the pinned one.
    if (entry.kind === "epoch_open" && entry.key !== ctx.pinned) throw new Fork();
    return { seq: entry.seq, prev: entry.prev, hash: signed.hash };
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

  // Walk the export from `from` (an entry checked before, {seq, hash}; null:
  // from entry 0) to `to` ({seq, hash}), checking every entry on the way and
  // keeping a mark of every MARK_EVERY-th; `progress` gets the last entry
  // checked after every page. Returns the last entry checked: `to`, or a
  // later one than `from` when this visit's pages ran out. ctx.good is the
  // last entry known good, where the export that shows a break begins.
  async function walk(ctx, from, to, progress = () => {}) {
    let path = `${box.dataset.exportUrl}?desde=${from ? from.seq : 0}`;
    let last = null;
    ctx.good = from ? from.seq : 0;
    while (path && ctx.pages > 0) {
      ctx.pages -= 1;
      const page = await getJSON(path);
      if (!isObject(page) || !Array.isArray(page.entries)) throw new Quiet();
      for (const ref of page.entries) {
        const entry = await checked(ctx, ref);
        if (last === null) {
          // The first entry is the one checked before, unchanged, or the log's first.
          const first = from ? entry.seq === from.seq && entry.hash === from.hash : entry.seq === 0;
          if (!first || (!from && entry.prev !== GENESIS)) throw new Fork();
        } else if (entry.seq !== last.seq + 1 || entry.prev !== last.hash) {
          throw new Fork();
        }
        const known = entry.seq === to.seq ? to.hash : ctx.marks[entry.seq];
        if (known !== undefined && entry.hash !== known) throw new Fork();
        if (entry.seq % MARK_EVERY === 0) ctx.marks[entry.seq] = entry.hash;
        last = entry;
        ctx.good = entry.seq;
        if (entry.seq === to.seq) break;
      }
      if (last) progress(last);
      if (last && last.seq === to.seq) return last;
      path = typeof page.next === "string" && page.next ? sameSite(page.next) : null;
      // A page with no entries that only names the next one would use up this visit's pages unseen.
      if (path && page.entries.length === 0) throw new Fork();
    }
    // An export that stops before the entry it must reach hides entries, and
    // one that gets no further than where the walk began keeps it from ending.
    if (!path || !last || (from && last.seq === from.seq)) throw new Fork();
    return last;
  }

  // The walk from entry 0 to the kept head: begun when the last one got
  // there a day ago or more (or at a time still to come: a clock that was
  // ahead), continued from where it stopped otherwise; kept after every page.
  async function audit(ctx, record) {
    const age = Date.now() - Date.parse(record.audited);
    if ((record.audit === null && age >= 0 && age < AUDIT_EVERY) || ctx.pages === 0) return;
    await walk(ctx, record.audit, { seq: record.seq, hash: record.head }, (last) => {
      const done = last.seq === record.seq;
      Object.assign(record, { audit: done ? null : { seq: last.seq, hash: last.hash }, marks: { ...ctx.marks } });
      if (done) record.audited = now();
      keep(record);
    });
  }

  function formatDate(time) {
    try {
      return new Date(time).toLocaleString(document.documentElement.lang || undefined, {
        dateStyle: "long",
        timeStyle: "short",
      });
    } catch (error) {
      // An unknown language: the ISO time.
      return time;
    }
  }

  // kept: what this browser had kept before this visit; null on first sight,
  // when the log did not verify and nothing it saw before can be named.
  function warn(kept, since) {
    const warning = box.querySelector("[data-witness-warning]");
    if (!warning) return;
    for (const part of warning.querySelectorAll("[data-witness-changed]")) part.hidden = !kept;
    for (const part of warning.querySelectorAll("[data-witness-unverified]")) part.hidden = Boolean(kept);
    // The export from the kept entry, or from the last entry known good before it: what shows the change.
    const download = warning.querySelector("[data-witness-export]");
    if (download) download.href = `${box.dataset.exportUrl}?desde=${Math.min(kept ? kept.seq : 0, since)}`;
    const seen = warning.querySelector("[data-witness-seen]");
    if (seen && kept) {
      seen.textContent = (seen.dataset.text || "")
        .replace("{date}", formatDate(kept.time))
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

  // The pinned key as WebCrypto's, or null when this browser has no Ed25519 (said under the page).
  async function signingKey(pinned) {
    let key;
    try {
      key = await pinnedKey(pinned);
    } catch (error) {
      throw error instanceof Refusal ? new Fork() : error;
    }
    box.dataset.signatures = key ? "checked" : "unsupported";
    const unsigned = box.querySelector("[data-witness-unsigned]");
    if (!key && unsigned) unsigned.hidden = false;
    return key;
  }

  async function check() {
    const head = await getJSON(box.dataset.headUrl);
    // No log open yet: nothing to witness.
    if (!head || head.seq === null || head.seq === undefined) return "none";
    if (!isSeq(head.seq) || typeof head.head !== "string" || !HEX64.test(head.head)) throw new Quiet();
    const store = readStore();
    if (store === null) return "offline";
    const kept = keptRecord(store);
    // The key is pinned on first sight (or by the first visit since this
    // script kept keys); once pinned, it alone checks the signatures.
    const pinned = (kept && kept.key) || head.public_key;
    if (!isKey(pinned)) throw new Quiet();
    const record = kept
      ? { ...kept, key: pinned }
      : { campaign: head.campaign, seq: head.seq, head: head.head, time: now(), key: pinned, marks: {}, audit: null };
    const ctx = { pages: MAX_PAGES, key: null, pinned: pinned, campaign: head.campaign, marks: { ...record.marks } };
    ctx.good = Infinity;
    let state = kept ? "same" : "kept";
    try {
      // Another key than the pinned one, or none, signs the log now.
      if (head.public_key !== pinned) throw new Fork();
      if (record.campaign && record.campaign !== head.campaign) throw new Fork();
      if (head.seq < record.seq || (head.seq === record.seq && head.head !== record.head)) throw new Fork();
      ctx.key = await signingKey(pinned);
      if (head.seq > record.seq) {
        const reached = await walk(ctx, { seq: record.seq, hash: record.head }, { seq: head.seq, hash: head.head });
        state = reached.seq === head.seq ? "extended" : "later";
        Object.assign(record, { seq: reached.seq, head: reached.hash, time: now(), marks: { ...ctx.marks } });
      }
      // What this visit established is kept before the walk from entry 0,
      // which may stop (network) or take several visits.
      keep(record);
      if (state !== "later") fillSeen(record.head);
      await audit(ctx, record);
    } catch (error) {
      if (error instanceof Fork) {
        warn(kept, ctx.good);
        return "fork";
      }
      throw error;
    }
    return state;
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
