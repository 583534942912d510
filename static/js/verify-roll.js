// In-page re-check of a rollog/v1 roll with WebCrypto: entry hash, permalink,
// seed chain to the epoch anchor, dice derivation and Ed25519 signature.
// A convenience only: this site serves the script; the independent check is
// the offline verifier (python -m rolls.verify_roll).
(function () {
  "use strict";
  const box = document.getElementById("inpage-check");
  if (!box) return;
  const status = box.querySelector(".inpage-status");
  const data = box.dataset;
  if (!window.crypto || !crypto.subtle) {
    status.textContent = data.labelUnsupported;
    box.dataset.result = "unsupported";
    return;
  }
  const encoder = new TextEncoder();

  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const unhex = (text) => new Uint8Array(text.match(/../g).map((pair) => parseInt(pair, 16)));
  const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const concat = (...parts) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let offset = 0;
    for (const part of parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  };
  const sha256 = async (bytes) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));

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

  function faces(spec) {
    const out = [];
    for (const term of spec.split("+")) {
      const [count, size] = term.split("d").map(Number);
      for (let i = 0; i < count; i++) out.push(size);
    }
    return out;
  }

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

  async function checkDice(entry, parent) {
    const pool = faces(entry.spec);
    const isReroll = entry.kind === "reroll";
    const message = [
      "rollog/v1", entry.campaign, String(entry.seq), entry.client_seed, entry.spec,
      isReroll ? entry.parent : "-", isReroll ? entry.rerolled.join(",") : "-",
    ].join(":");
    const take = await stream(unhex(entry.seed), message);
    if (isReroll) {
      // Only the chosen positions change; the rest are the parent's dice.
      const expected = parent.dice.slice();
      for (let i = 0; i < entry.rerolled.length; i++) {
        const position = entry.rerolled[i];
        const die = await draw(take, pool[position]);
        if (die !== entry.drawn[i]) return false;
        expected[position] = die;
      }
      return expected.length === entry.dice.length && expected.every((die, i) => die === entry.dice[i]);
    }
    if (pool.length !== entry.dice.length) return false;
    for (let i = 0; i < pool.length; i++) {
      if ((await draw(take, pool[i])) !== entry.dice[i]) return false;
    }
    return true;
  }

  function show(result, label, detail) {
    status.textContent = (result === "ok" ? "✓ " : "✗ ") + label + (detail ? " (" + detail + ")" : "");
    box.classList.add(result === "ok" ? "text-success" : result === "fail" ? "text-danger" : "text-body-secondary");
    box.dataset.result = result;
  }

  // Bytes -> {entry, hash}; the signature is checked later, once we know
  // whether this browser can verify Ed25519 at all.
  async function load(b64) {
    const bytes = fromBase64(b64);
    const hash = await sha256(concat(encoder.encode("rollog/v1/entry\n"), bytes));
    return { entry: JSON.parse(new TextDecoder().decode(bytes)), hash: hash };
  }

  async function run() {
    const roll = await load(data.entryB64);
    if (hex(roll.hash) !== data.hash) return show("fail", data.labelFail, "hash");
    if (base32(roll.hash.slice(0, 15)).toLowerCase() !== data.permalink) return show("fail", data.labelFail, "permalink");
    const entry = roll.entry;
    const epoch = await load(data.epochB64);
    const epochOk = epoch.entry.kind === "epoch_open" && epoch.entry.campaign === entry.campaign
      && epoch.entry.epoch === entry.epoch && epoch.entry.seq < entry.seq
      && entry.epoch_index >= 1 && entry.epoch_index <= epoch.entry.length;
    if (!epochOk) return show("fail", data.labelFail, "epoch");
    let seed = unhex(entry.seed);
    for (let i = 0; i < entry.epoch_index; i++) seed = await sha256(seed);
    if (hex(seed) !== epoch.entry.anchor) return show("fail", data.labelFail, "seed");
    let parent = null;
    if (entry.kind === "reroll") {
      if (!data.parentB64) return show("fail", data.labelFail, "parent");
      parent = await load(data.parentB64);
      if (hex(parent.hash) !== entry.parent || parent.entry.spec !== entry.spec) {
        return show("fail", data.labelFail, "parent");
      }
    }
    if (!(await checkDice(entry, parent && parent.entry))) return show("fail", data.labelFail, "dice");
    let key;
    try {
      key = await crypto.subtle.importKey("raw", unhex(data.pubkey), { name: "Ed25519" }, false, ["verify"]);
    } catch (error) {
      return show("unsupported", data.labelUnsupported, "");
    }
    const signatures = [[roll.hash, data.sig], [epoch.hash, data.epochSig]];
    if (parent) signatures.push([parent.hash, data.parentSig]);
    for (const [hash, sig] of signatures) {
      const signed = concat(encoder.encode("rollog/v1/sig\n"), hash);
      if (!(await crypto.subtle.verify({ name: "Ed25519" }, key, unhex(sig), signed))) {
        return show("fail", data.labelFail, "firma");
      }
    }
    return show("ok", data.labelOk, "");
  }

  run().catch((error) => show("fail", data.labelFail, error.message));
})();
