// Drives the official Node client (@runwayml/sdk, pinned in package.json) against a running
// genhost, unmodified but for the version header it is told to add (CLIENTS.md 1.3):
// uploads.createEphemeral uploads a PNG (POST /v1/uploads, then the multipart POST to the
// returned uploadUrl), and POST /v1/image_to_video takes the returned URI as promptImage.
//
// Run by the gtest NodeSdk.* (tests/http/uploads_test.cpp) through run_node_sdk.sh.
// Environment: GENHOST_URL, GENHOST_KEY, GENHOST_PNG (a file). Prints one JSON line:
// {"uri": ..., "task": {...}} or {"uri"?: ..., "error": {...}}; exits 1 on an error.
import RunwayML, { toFile } from '@runwayml/sdk';
import { File as BufferFile } from 'node:buffer';
import { readFileSync } from 'node:fs';

// Node 18 (Debian 12's own) has File only in node:buffer; the client looks for the global, as its
// own error message advises ("set `globalThis.File` to `import('node:buffer').File`").
if (typeof globalThis.File === 'undefined') globalThis.File = BufferFile;

const client = new RunwayML({
  apiKey: process.env.GENHOST_KEY,
  baseURL: process.env.GENHOST_URL,
  defaultHeaders: { 'X-Service-Version': '2024-11-06' },
  maxRetries: 0, // a retried create would make a second task
});

const result = {};
try {
  const png = readFileSync(process.env.GENHOST_PNG);
  const file = await toFile(png, 'frame.png', { type: 'image/png' });
  const { uri } = await client.uploads.createEphemeral({
    file,
    fileMetadata: JSON.stringify({ source: 'genhost node test' }),
  });
  result.uri = uri;
  result.task = await client.imageToVideo.create({
    model: 'gen4_turbo',
    promptImage: uri,
    promptText: 'a slow pan across the frame',
    ratio: '1280:720',
    duration: 5,
  });
} catch (e) {
  result.error = {
    name: e?.constructor?.name,
    status: e?.status,
    message: String(e?.message ?? e),
    body: e?.error,
  };
}
console.log(JSON.stringify(result));
process.exitCode = result.error ? 1 : 0;
