import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bridgeFingerprint, lengthPrefixed } from '../../src/core/treering/activation/fingerprint.js';
import { parseManifest, serializeManifest } from '../../src/core/treering/activation/manifest.js';

// Vectors computed independently (Python: struct.pack('>Q', len) + bytes, hashlib.sha256).
test('field stream is u64 big-endian length then UTF-8 bytes', () => {
  assert.equal(lengthPrefixed(['x', '1']).toString('hex'), '000000000000000178000000000000000131');
  assert.equal(bridgeFingerprint('x', '1', [], []), '0d6959256b2587a782d71ad0299005d89941a14b74cf780dfd73a577f150b1af');
});

const FILE = { path: '.claude/skills/tree-ring-memory/SKILL.md', sha256: 'c'.repeat(64) };
const BLOCK = { path: '.claude/settings.json', block_id: 'tree-ring-session-start-v1', sha256: 'd'.repeat(64), leading_separator: '\n' };

test('the seed manifest example fingerprints as specified', () => {
  assert.equal(bridgeFingerprint('claude-code', '1', [FILE], [BLOCK]), '9acbbc81cde75ec9e89c6df1ffd6f5c86586d7ed6152da65e9df4e020a25dd70');
});

test('an empty separator still contributes a zero-length field, and differs from LF', () => {
  const empty = bridgeFingerprint('claude-code', '1', [FILE], [{ ...BLOCK, leading_separator: '' }]);
  assert.equal(empty, 'a9af2212650bb346dfb2429dd747412d510dc3ad2a048b2b56fd7a6ae8dfb2b0');
  assert.notEqual(empty, bridgeFingerprint('claude-code', '1', [FILE], [BLOCK]));
});

test('files sort by UTF-8 bytes, not UTF-16 code units', () => {
  const a = { path: '\uff61', sha256: 'a'.repeat(64) };
  const b = { path: '\u{1F600}', sha256: 'b'.repeat(64) };
  const expected = 'f078bc721051df68756792d88afb1263476b9635f78fc07799b57a94a9f6e93a';
  assert.equal(bridgeFingerprint('codex', '4', [b, a], []), expected);
  assert.equal(bridgeFingerprint('codex', '4', [a, b], []), expected);
  // JS default sort would put the emoji (surrogate 0xD83D) first: a different stream.
  const utf16Order = [a, b].sort((x, y) => (x.path < y.path ? -1 : 1));
  assert.equal(utf16Order[0], b);
});

test('mutants differ: harness, version, path, hash, block field', () => {
  const base = bridgeFingerprint('claude-code', '1', [FILE], [BLOCK]);
  const mutants = [
    bridgeFingerprint('codex', '1', [FILE], [BLOCK]),
    bridgeFingerprint('claude-code', '2', [FILE], [BLOCK]),
    bridgeFingerprint('claude-code', '1', [{ ...FILE, path: FILE.path + 'x' }], [BLOCK]),
    bridgeFingerprint('claude-code', '1', [{ ...FILE, sha256: 'e'.repeat(64) }], [BLOCK]),
    bridgeFingerprint('claude-code', '1', [FILE], [{ ...BLOCK, block_id: 'other' }]),
    bridgeFingerprint('claude-code', '1', [FILE], []),
  ];
  for (const m of mutants) assert.notEqual(m, base);
  assert.equal(new Set(mutants).size, mutants.length);
});

test('manifest: omitted separator reads as "", round trip is byte-stable, unknown fields fail', () => {
  const doc = {
    schema_version: 1,
    protocol_version: 1,
    store_id: '01234567-89ab-4def-8123-456789abcdef',
    project_root_fingerprint: 'a'.repeat(64),
    cli_version: '0.14.0',
    harnesses: {
      'claude-code': {
        state: 'configured-awaiting-proof',
        adapter_version: '1',
        adapter_capability: 'native-preflight',
        bridge_fingerprint: 'b'.repeat(64),
        bridge_path: '.claude/settings.json',
        owned_files: [FILE],
        managed_blocks: [{ path: BLOCK.path, block_id: BLOCK.block_id, sha256: BLOCK.sha256 }],
      },
    },
  };
  const m = parseManifest(JSON.stringify(doc));
  assert.equal(m.harnesses['claude-code']!.managed_blocks[0]!.leading_separator, '');
  const bytes = serializeManifest(m);
  assert.equal(serializeManifest(parseManifest(bytes)), bytes);
  assert.ok(!bytes.includes('leading_separator'));
  assert.throws(() => parseManifest(JSON.stringify({ ...doc, extra: 1 })), /unknown field/);
  assert.throws(() => parseManifest(JSON.stringify({ ...doc, protocol_version: 2 })), /unsupported/);
  const abs = structuredClone(doc);
  abs.harnesses['claude-code'].bridge_path = '/etc/passwd';
  assert.throws(() => parseManifest(JSON.stringify(abs)), /project-relative/);
  const badSep = structuredClone(doc) as unknown as { harnesses: Record<string, { managed_blocks: Record<string, unknown>[] }> };
  badSep.harnesses['claude-code']!.managed_blocks[0]!.leading_separator = ' ';
  assert.throws(() => parseManifest(JSON.stringify(badSep)), /one of/);
});
