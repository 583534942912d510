// The rollog/v1 primitives both browser checks share (verify-roll.js on a
// roll's page, witness.js on every campaign page), with WebCrypto: exact
// signed bytes -> hash, Ed25519 signature under the pinned key, canonical
// JSON. They are the rules of rolls/verify.py: an entry's hash is
// SHA-256("rollog/v1/entry\n" ‖ bytes) and its signature is Ed25519 over
// "rollog/v1/sig\n" ‖ that hash.
// Exposed as window.Rollog; this file must load before the scripts using it.
(function () {
  "use strict";
  const encoder = new TextEncoder();
  // fatal: bytes that are not UTF-8 are refused, never patched with U+FFFD;
  // ignoreBOM: a leading BOM stays in the text, so JSON.parse refuses it.
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const HEX64 = /^[0-9a-f]{64}$/;

  // A refusal carries a short reason code, shown in parentheses on the page.
  class Refusal extends Error {}
  function check(ok, reason) {
    if (!ok) throw new Refusal(reason);
  }

  const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  function unhex(text, reason) {
    check(typeof text === "string" && /^(?:[0-9a-f]{2})+$/.test(text), reason);
    return new Uint8Array(text.match(/../g).map((pair) => parseInt(pair, 16)));
  }
  function fromBase64(text, reason) {
    check(typeof text === "string", reason);
    try {
      return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    } catch (error) {
      throw new Refusal(reason);
    }
  }
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
  const tagged = async (tag, bytes) => sha256(concat(encoder.encode(tag), bytes));

  // Python's json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False).
  // JSON.stringify escapes strings the same way (", \, control characters;
  // everything else raw). Keys are joined by hand, because a JS object lists
  // integer-like keys first whatever order they were added in. The format's
  // keys are ASCII, where sort() and Python's code-point order agree.
  function canonical(value) {
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (isObject(value)) {
      const keys = Object.keys(value).sort();
      return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
    }
    return JSON.stringify(value);
  }

  // Exact bytes -> object. Non-canonical bytes are refused, as offline: they
  // could hide a duplicate key that another JSON reader would take first.
  function parseCanonical(bytes) {
    let text;
    let value;
    try {
      text = decoder.decode(bytes);
      value = JSON.parse(text);
    } catch (error) {
      throw new Refusal("json");
    }
    check(isObject(value) && canonical(value) === text, "canonical");
    return value;
  }

  // {entry_b64, sig} -> {entry, hash (hex), raw (bytes)}. The signature is
  // skipped only when this browser cannot verify Ed25519 (key === null); the
  // caller must then say so, never call the entry checked.
  async function open(ref, key) {
    check(isObject(ref), "bundle");
    const bytes = fromBase64(ref.entry_b64, "bundle");
    const raw = await tagged("rollog/v1/entry\n", bytes);
    const signature = unhex(ref.sig, "signature");
    check(signature.length === 64, "signature");
    if (key) {
      const signed = concat(encoder.encode("rollog/v1/sig\n"), raw);
      check(await crypto.subtle.verify({ name: "Ed25519" }, key, signature, signed), "signature");
    }
    return { entry: parseCanonical(bytes), hash: hex(raw), raw: raw };
  }

  // The pinned key, or null when this browser has no Ed25519 in WebCrypto
  // (NotSupportedError). A browser that has it and still refuses the key was
  // given a bad one: a refusal, never "cannot check".
  async function pinnedKey(publicKeyHex) {
    check(typeof publicKeyHex === "string" && HEX64.test(publicKeyHex), "key");
    try {
      return await crypto.subtle.importKey("raw", unhex(publicKeyHex, "key"), { name: "Ed25519" }, false, ["verify"]);
    } catch (error) {
      if (error && error.name === "NotSupportedError") return null;
      throw new Refusal("key");
    }
  }

  window.Rollog = Object.freeze({
    HEX64, Refusal, check, isObject, hex, unhex, fromBase64, concat, sha256, tagged, parseCanonical, open, pinnedKey,
  });
})();
