// Drives the official Node client (@runwayml/sdk, pinned in package.json) against a running
// genhost as a new user would: voices.preview, voices.create (designed from a description, and
// cloned from the preview's MP3 as a data URI), voices.retrieve until READY or FAILED,
// voices.list, voices.update (`{}` and a rename), an avatar with the custom voice, voices.delete,
// and the client's errors for a voice that does not exist and for the client's own model
// literal.
//
// Run by the gtest NodeSdk.* (tests/http/uploads_test.cpp) through run_node_sdk.sh.
// Environment: GENHOST_URL, GENHOST_KEY, GENHOST_PNG (a portrait file). Prints one JSON line with
// what it saw, or {"error": {...}}; exits 1 on an unexpected error.
import RunwayML, { NotFoundError, BadRequestError } from '@runwayml/sdk';
import { readFileSync } from 'node:fs';

const client = new RunwayML({
  apiKey: process.env.GENHOST_KEY,
  baseURL: process.env.GENHOST_URL,
  defaultHeaders: { 'X-Service-Version': '2024-11-06' },
  maxRetries: 0,
});

async function settled(id) {
  for (let i = 0; i < 300; i++) {
    const v = await client.voices.retrieve(id);
    if (v.status !== 'PROCESSING') return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`voice ${id} still PROCESSING`);
}

const out = {};
try {
  const prompt = 'A warm, slow voice of an elderly British man with a deep pitch';
  out.preview = await client.voices.preview({ model: 'voice_ttv_v3', prompt });
  const mp3 = await fetch(out.preview.url);
  out.previewType = mp3.headers.get('content-type');
  const sample = Buffer.from(await mp3.arrayBuffer());

  const designed = await client.voices.create({
    name: 'Narrator',
    description: 'Reads the stories',
    from: { type: 'text', model: 'voice_ttv_v3', prompt },
  });
  const cloned = await client.voices.create({
    name: 'Narrator clone',
    from: { type: 'audio', audio: `data:audio/mpeg;base64,${sample.toString('base64')}` },
  });
  out.designed = await settled(designed.id);
  out.cloned = await settled(cloned.id);

  const listed = [];
  for await (const v of client.voices.list({ limit: 1 })) listed.push(v.id);
  out.listed = listed;
  out.unchanged = await client.voices.update(designed.id, {});
  out.renamed = await client.voices.update(designed.id, { name: 'Storyteller', description: null });

  const portrait = readFileSync(process.env.GENHOST_PNG).toString('base64');
  const avatar = await client.avatars.create({
    name: 'Teller',
    referenceImage: `data:image/png;base64,${portrait}`,
    personality: 'Tells stories slowly.',
    voice: { type: 'custom', id: designed.id },
  });
  out.avatarVoice = avatar.voice;

  await client.voices.delete(designed.id);
  out.avatarVoiceAfterDelete = (await client.avatars.retrieve(avatar.id)).voice;
  try {
    await client.voices.retrieve(designed.id);
    out.missing = 'no error';
  } catch (e) {
    out.missing = { notFound: e instanceof NotFoundError, status: e.status };
  }
  try {
    await client.voices.create({ name: 'x', from: { type: 'text', model: 'eleven_ttv_v3', prompt } });
    out.clientLiteral = 'no error';
  } catch (e) {
    out.clientLiteral = { badRequest: e instanceof BadRequestError, body: e.error };
  }
} catch (e) {
  out.error = {
    name: e?.constructor?.name,
    status: e?.status,
    message: String(e?.message ?? e),
    body: e?.error,
  };
}
console.log(JSON.stringify(out));
process.exitCode = out.error ? 1 : 0;
