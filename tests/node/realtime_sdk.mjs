// Drives the official Node client (@runwayml/sdk, pinned in package.json) against a running
// genhost as a new user would for realtime sessions: realtimeSessions.create (a preset avatar
// with a client_event tool), retrieve until READY (as the react helper polls), the consume call
// a browser makes (plain fetch: the session key as the bearer, no API key, no version header,
// no body), realtimeSessions.delete, avatarConversations.list (paged with for await) and
// retrieve, avatars.getUsage, avatarConversations.delete, and the client's errors for a bad body
// (BadRequestError) and a session that does not exist (NotFoundError).
//
// Run by the gtest NodeSdk.* (tests/http/uploads_test.cpp) through run_node_sdk.sh.
// Environment: GENHOST_URL, GENHOST_KEY. Prints one JSON line with what it saw, or
// {"error": {...}}; exits 1 on an unexpected error.
import { NotFoundError, BadRequestError } from '@runwayml/sdk';
import { client, failure } from './sdk_common.mjs';

const out = {};
try {
  const start = new Date(Date.now() - 60_000).toISOString();
  const created = await client.realtimeSessions.create({
    model: 'gwm1_avatars',
    avatar: { type: 'service-preset', presetId: 'cooking-teacher' },
    maxDuration: 120,
    personality: 'A cheerful chef who answers in one sentence.',
    tools: [
      {
        type: 'client_event',
        name: 'show_recipe',
        description: 'Shows a recipe on the page',
        parameters: [{ type: 'string', name: 'dish', description: 'Which dish', enum: ['soup', 'cake'] }],
      },
    ],
  });
  out.created = created;
  let session;
  for (let i = 0; i < 60; i++) {
    session = await client.realtimeSessions.retrieve(created.id);
    if (session.status !== 'NOT_READY') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  out.ready = { status: session.status, hasKey: typeof session.sessionKey === 'string' && session.sessionKey.length > 0, expiresAt: session.expiresAt };
  const consume = await fetch(`${process.env.GENHOST_URL}/v1/realtime_sessions/${created.id}/consume`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${session.sessionKey}` },
  });
  out.consume = { status: consume.status, cors: consume.headers.get('access-control-allow-origin'), body: await consume.json() };
  await client.realtimeSessions.delete(created.id);
  out.cancelled = (await client.realtimeSessions.retrieve(created.id)).status;

  const listed = [];
  for await (const c of client.avatarConversations.list({ limit: 1 })) listed.push(c);
  out.listed = listed;
  out.conversation = await client.avatarConversations.retrieve(created.id);
  out.usage = await client.avatars.getUsage({ startDate: start, endDate: new Date(Date.now() + 60_000).toISOString() });
  await client.avatarConversations.delete(created.id);
  out.deleted = await failure(client.avatarConversations.retrieve(created.id), NotFoundError);
  out.badBody = await failure(
    client.realtimeSessions.create({ model: 'gwm1_avatars', avatar: { type: 'service-preset', presetId: 'cooking-teacher' }, maxDuration: 5 }),
    BadRequestError);
  out.missing = await failure(client.realtimeSessions.retrieve('182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e'), NotFoundError);
  console.log(JSON.stringify(out));
} catch (e) {
  console.log(JSON.stringify({ error: { message: String(e), status: e.status, body: e.error }, seen: out }));
  process.exit(1);
}
