// Drives the official Node client (@runwayml/sdk, pinned in package.json) against a running
// genhost as a new user would: documents.create / retrieve / update / list (paged with
// for await) / delete, avatars.create with documentIds and avatars.update, and the errors the
// client raises for a document that does not exist and for bad input.
//
// Run by the gtest NodeSdk.* (tests/http/documents_test.cpp) through run_node_sdk.sh.
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

const out = {};
try {
  const made = [];
  for (const name of ['Returns policy', 'Shipping guide', 'Opening hours']) {
    made.push(await client.documents.create({
      name,
      content: `# ${name}\nEverything a customer asks about ${name.toLowerCase()}.\n`,
    }));
  }
  out.created = made.map((d) => ({ id: d.id, name: d.name, type: d.type, usedBy: d.usedBy }));

  await client.documents.update(made[0].id, { name: 'Returns and refunds' });
  out.retrieved = await client.documents.retrieve(made[0].id);

  // Every page, two documents at a time, oldest first.
  const listed = [];
  for await (const d of client.documents.list({ limit: 2, sort: 'createdAt', order: 'asc' })) {
    listed.push({ id: d.id, name: d.name, hasContent: 'content' in d });
  }
  out.listed = listed;

  const portrait = readFileSync(process.env.GENHOST_PNG).toString('base64');
  const avatar = await client.avatars.create({
    name: 'Clerk',
    referenceImage: `data:image/png;base64,${portrait}`,
    personality: 'A patient shop clerk who answers from the handbook.',
    voice: { type: 'service-live-preset', presetId: 'clara' },
    documentIds: [made[0].id, made[1].id],
  });
  out.avatar = { id: avatar.id, documentIds: avatar.documentIds, status: avatar.status };
  out.usedBy = (await client.documents.retrieve(made[1].id)).usedBy;

  await client.documents.delete(made[1].id);
  out.afterDelete = (await client.avatars.retrieve(avatar.id)).documentIds;

  try {
    await client.documents.retrieve(made[1].id);
    out.missing = 'no error';
  } catch (e) {
    out.missing = { notFound: e instanceof NotFoundError, status: e.status, body: e.error };
  }
  try {
    await client.documents.create({ name: '', content: 'x'.repeat(200001) });
    out.invalid = 'no error';
  } catch (e) {
    out.invalid = { badRequest: e instanceof BadRequestError, status: e.status, body: e.error };
  }
  try {
    await client.avatars.update(avatar.id, { documentIds: [made[1].id] });
    out.attachGone = 'no error';
  } catch (e) {
    out.attachGone = { status: e.status, body: e.error };
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
