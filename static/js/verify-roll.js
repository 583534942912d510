// In-page re-check of a rollog/v1 (v1.1) roll bundle with WebCrypto: Ed25519
// signatures under the pinned key, entry hash and permalink, seed chain to the
// epoch anchor, dice derivation (plain, exploding, re-roll, extension) and,
// for a sealed entry, its opening against the signed commitment.
// A convenience only: this site serves the script; the independent check is
// the offline verifier (python -m rolls.verify_roll).
//
// Page contract: the §3.10 bundle in <script type="application/json"
// id="roll-bundle">, and <div id="inpage-check" data-pubkey data-label-ok
// data-label-fail data-label-unsupported data-label-sealed> holding
// <span class="inpage-status">. The result lands in box.dataset.result.
// Tests define window.__rollogTest before loading the script to get
// {verifyBundle} instead of a run on the page.
(function () {
  "use strict";
  // The shared primitives (static/js/rollog.js): signed entries, hashes, canonical JSON.
  // Without them (that script did not load) this page cannot check: verifyBundle says "unsupported".
  const { HEX64, Refusal, check, isObject, hex, unhex, fromBase64, concat, sha256, tagged } = window.Rollog || {};
  const { parseCanonical, open, pinnedKey } = window.Rollog || {};
  const encoder = new TextEncoder();

  const HEX_SIG = /^[0-9a-f]{128}$/;
  const SPEC = /^\d{1,3}d\d{1,4}!?(\+\d{1,3}d\d{1,4}!?)*$/;
  const CLIENT_SEED = /^[0-9A-Za-z_-]{1,64}$/;
  const MAX_DICE = 100;
  const ROLL_KINDS = ["roll", "reroll", "extend"];
  // §3.7: a sealed outer entry carries exactly these keys, nothing else.
  const SEALED_KEYS = ["audience", "campaign", "commitment", "epoch", "epoch_index", "kind", "prev", "seed", "seq", "time", "v"];
  const AUDIENCES = ["gm", "recipients", "scene"];
  // Fields an opening must repeat from its outer entry (v1.1 readings before T10).
  const SHARED = ["v", "campaign", "seq", "prev", "time", "epoch", "epoch_index", "seed"];

  const isInt = (value) => Number.isSafeInteger(value);
  const sameList = (a, b) => Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => x === b[i]);
  function base32(bytes) {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let bits = 0;
    let value = 0;
    let out = "";
    for (const byte of bytes) {
      value = (value << 8) | byte;
      bits += 8;
      while (bits >= 5) {
        out += alphabet[(value >>> (bits - 5)) & 31];
        bits -= 5;
      }
    }
    if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
    return out;
  }

  // The slot: an epoch_open of the same campaign and epoch, earlier in the
  // log, and a seed that hashes down to its anchor in epoch_index steps.
  async function checkSlot(entry, epochOpen) {
    const epoch = epochOpen.entry;
    check(epoch.kind === "epoch_open" && epoch.v === 1 && epoch.campaign === entry.campaign
      && isInt(entry.epoch) && epoch.epoch === entry.epoch && isInt(entry.seq) && isInt(epoch.seq)
      && epoch.seq < entry.seq && isInt(entry.epoch_index) && isInt(epoch.length)
      && entry.epoch_index >= 1 && entry.epoch_index <= epoch.length, "epoch");
    check(HEX64.test(entry.seed), "seed");
    let seed = unhex(entry.seed, "seed");
    for (let i = 0; i < entry.epoch_index; i++) seed = await sha256(seed);
    check(hex(seed) === epoch.anchor, "seed");
  }

  // §3.7 outer entry: exactly the listed keys, so nothing private can ride along.
  function checkSealedOuter(outer) {
    check(Object.keys(outer).sort().join(",") === SEALED_KEYS.join(","), "sealed-fields");
    check(AUDIENCES.includes(outer.audience) && HEX64.test(outer.commitment), "sealed-fields");
  }

  // Opening bytes -> inner entry, bound to the outer entry by its commitment.
  async function unseal(outer, openingB64) {
    const body = fromBase64(openingB64, "opening");
    check(hex(await tagged("rollog/v1/sealed\n", body)) === outer.commitment, "commitment");
    const inner = parseCanonical(body);
    check(!("audience" in inner) && !("commitment" in inner) && HEX64.test(inner.nonce), "opening");
    check(SHARED.every((field) => inner[field] === outer[field]), "opening");
    check(ROLL_KINDS.includes(inner.kind), "kind");
    // The seed x_i is public later, so the dice stay secret only through a
    // client seed of at least 128 bits.
    check(typeof inner.client_seed === "string" && inner.client_seed.length >= 32, "client-seed");
    return inner;
  }

  // The version this re-roll or extension changes: signed, named by hash,
  // earlier, same campaign. A sealed parent is read through its opening, and
  // only a sealed child with the same audience may have one (§3.7).
  async function openParent(ref, entry, sealedChild, key) {
    check(isObject(ref), "parent");
    const parent = await open(ref, key);
    check(parent.hash === entry.parent, "parent");
    let version = parent.entry;
    if (version.kind === "sealed") {
      checkSealedOuter(version);
      check(sealedChild !== null && sealedChild.audience === version.audience && typeof ref.opening_b64 === "string", "parent");
      version = await unseal(version, ref.opening_b64);
    }
    check(ROLL_KINDS.includes(version.kind) && version.campaign === entry.campaign
      && isInt(version.seq) && version.seq < entry.seq && Array.isArray(version.dice), "parent");
    return { entry: version, hash: parent.hash };
  }

  // "2d6!+1d8" -> one {faces, explodes} per base die (§3.4, §3.4b).
  function pool(spec) {
    check(typeof spec === "string" && SPEC.test(spec), "spec");
    const out = [];
    for (const term of spec.split("+")) {
      const explodes = term.endsWith("!");
      const [count, faces] = term.replace("!", "").split("d").map(Number);
      check(faces >= 2 && faces <= 1000, "spec");
      for (let i = 0; i < count; i++) out.push({ faces: faces, explodes: explodes });
    }
    // Refused before any draw: explosions can only add to this.
    check(out.length <= MAX_DICE, "spec");
    return out;
  }

  // The HMAC-SHA256 byte stream of §3.4: take(k) returns the next k bytes.
  async function stream(seed, message) {
    const key = await crypto.subtle.importKey("raw", seed, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    let buffer = new Uint8Array(0);
    let block = 0;
    let used = 0;
    return async function take(size) {
      while (buffer.length < used + size) {
        const next = await crypto.subtle.sign("HMAC", key, encoder.encode(message + ":" + block));
        block += 1;
        buffer = concat(buffer, new Uint8Array(next));
      }
      const chunk = buffer.slice(used, used + size);
      used += size;
      return chunk;
    };
  }

  // Rejection sampling: one die of `sides` faces, exactly uniform.
  async function draw(take, sides) {
    let size = 1;
    while (256 ** size < sides) size += 1;
    const span = 256 ** size;
    const limit = span - (span % sides);
    for (;;) {
      const chunk = await take(size);
      let value = 0;
      for (const byte of chunk) value = value * 256 + byte;
      if (value < limit) return (value % sides) + 1;
    }
  }

  // §3.4b as fixed before T10: every base die first, then one walk from
  // position 0 over the growing list; a maximum of a `!` term appends one die
  // of the same faces, which may explode in turn, until 100 dice in all.
  async function rollPool(take, dice) {
    const out = [];
    for (const die of dice) out.push(await draw(take, die.faces));
    const kinds = dice.slice();
    for (let i = 0; i < out.length && out.length < MAX_DICE; i++) {
      if (kinds[i].explodes && out[i] === kinds[i].faces) {
        kinds.push(kinds[i]);
        out.push(await draw(take, kinds[i].faces));
      }
    }
    return out;
  }

  // M of §3.4; positions is "-" for a roll, "1,2" for a re-roll, "+" for an extension.
  async function streamFor(entry, parentHash, positions) {
    check(typeof entry.client_seed === "string" && CLIENT_SEED.test(entry.client_seed), "client-seed");
    const message = ["rollog/v1", entry.campaign, String(entry.seq), entry.client_seed, entry.spec, parentHash, positions].join(":");
    return stream(unhex(entry.seed, "seed"), message);
  }

  async function checkDice(entry, parent) {
    const dice = pool(entry.spec);
    if (entry.kind === "roll") {
      check(entry.parent === null && entry.rerolled === null, "kind");
      const take = await streamFor(entry, "-", "-");
      check(sameList(await rollPool(take, dice), entry.dice), "dice");
    } else if (entry.kind === "reroll") {
      // Same pool as the parent; only the chosen base positions change.
      // Re-rolling exploding dice or an extended version is not fixed by
      // rollog v1.1, so such an entry cannot be verified (as verify_roll.py).
      const positions = entry.rerolled;
      check(parent.entry.spec === entry.spec && parent.entry.kind !== "extend", "parent");
      check(!dice.some((die) => die.explodes), "spec");
      check(Array.isArray(positions) && positions.length > 0 && positions.every((p, i) => isInt(p)
        && p >= 0 && p < dice.length && (i === 0 || p > positions[i - 1])), "positions");
      const take = await streamFor(entry, parent.hash, positions.join(","));
      const drawn = [];
      for (const position of positions) drawn.push(await draw(take, dice[position].faces));
      const expected = parent.entry.dice.slice();
      positions.forEach((position, i) => { expected[position] = drawn[i]; });
      check(sameList(drawn, entry.drawn) && sameList(expected, entry.dice), "dice");
    } else {
      // §3.6b extension: the added spec alone is drawn, appended to the parent's
      // dice; added dice do not explode (as verify_roll.py).
      check(entry.rerolled === null, "kind");
      check(!dice.some((die) => die.explodes), "spec");
      const take = await streamFor(entry, parent.hash, "+");
      const drawn = await rollPool(take, dice);
      check(sameList(drawn, entry.drawn) && sameList(parent.entry.dice.concat(drawn), entry.dice), "dice");
    }
  }

  // bundle (parsed §3.10 JSON) + pinned key hex -> {result, reason, entry}.
  // result: "ok", "sealed" (content not disclosed), "fail" or "unsupported".
  async function verifyBundle(bundle, publicKeyHex) {
    if (!window.Rollog || !window.crypto || !crypto.subtle) return { result: "unsupported", reason: "", entry: null };
    try {
      check(isObject(bundle), "bundle");
      const key = await pinnedKey(publicKeyHex);
      const done = (result, entry) => ({ result: key ? result : "unsupported", reason: "", entry: entry });
      const signed = await open(bundle, key);
      check(bundle.entry_hash === signed.hash, "hash");
      check(base32(signed.raw.slice(0, 15)).toLowerCase() === bundle.permalink, "permalink");
      const outer = signed.entry;
      check(outer.v === 1, "version");
      await checkSlot(outer, await open(bundle.epoch_open, key));
      let entry = outer;
      let sealed = null;
      if (outer.kind === "sealed") {
        checkSealedOuter(outer);
        // A reader who may not see the roll: its place in the chain is all there is.
        if (bundle.opening_b64 === null || bundle.opening_b64 === undefined) return done("sealed", outer);
        entry = await unseal(outer, bundle.opening_b64);
        sealed = outer;
      }
      check(ROLL_KINDS.includes(entry.kind), "kind");
      const parent = entry.kind === "roll" ? null : await openParent(bundle.parent, entry, sealed, key);
      await checkDice(entry, parent);
      return done("ok", entry);
    } catch (error) {
      return { result: "fail", reason: error instanceof Refusal ? error.message : String(error.message || error), entry: null };
    }
  }

  if (window.__rollogTest) {
    window.__rollogTest.verifyBundle = verifyBundle;
    return;
  }

  const box = document.getElementById("inpage-check");
  if (!box) return;
  const status = box.querySelector(".inpage-status");
  const labels = {
    ok: box.dataset.labelOk, sealed: box.dataset.labelSealed,
    fail: box.dataset.labelFail, unsupported: box.dataset.labelUnsupported,
  };
  const marks = { ok: "✓ ", sealed: "✓ ", fail: "✗ ", unsupported: "" };
  const classes = { ok: "text-success", sealed: "text-success", fail: "text-danger", unsupported: "text-body-secondary" };

  function show(result, reason) {
    status.textContent = marks[result] + labels[result] + (result === "fail" && reason ? " (" + reason + ")" : "");
    box.classList.add(classes[result]);
    box.dataset.result = result;
  }

  function readBundle() {
    const script = document.getElementById("roll-bundle");
    try {
      return JSON.parse(script.textContent);
    } catch (error) {
      return null;
    }
  }

  verifyBundle(readBundle(), box.dataset.pubkey)
    .then((outcome) => show(outcome.result, outcome.reason))
    .catch((error) => show("fail", error.message));
})();
