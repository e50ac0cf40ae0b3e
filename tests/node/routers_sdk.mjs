// Drives the official Node client (@runwayml/sdk, pinned in package.json) against a running
// genhost as a new user would: routers.create (defaults, and with settings), routers.update
// (a settings merge, then a rename that keeps the version), routers.list (paged with for await),
// routers.retrieve, routers.delete, and the client's errors for a duplicate slug, an unknown
// model and a router that does not exist. Then routed generation: a dry run through client.post
// (the SDK's types omit dryRun), generate.image.create waited to its output with
// waitForTaskOutput, generate.audio.create, a request no model can serve (BadRequestError) and
// an unknown configId (NotFoundError), and the router's decision log through client.get.
//
// Run by the gtest NodeSdk.* (tests/http/uploads_test.cpp) through run_node_sdk.sh.
// Environment: GENHOST_URL, GENHOST_KEY. Prints one JSON line with what it saw, or
// {"error": {...}}; exits 1 on an unexpected error.
import { ConflictError, NotFoundError, BadRequestError } from '@runwayml/sdk';
import { client, failure } from './sdk_common.mjs';

const out = {};
try {
  out.plain = await client.routers.create({ slug: 'plain' });
  const ads = await client.routers.create({
    slug: 'ads-video',
    name: 'Ads',
    settings: {
      optimizeFor: 'quality',
      models: { mode: 'allowlist_only', ids: ['gen4_turbo', 'gen4_image'] },
      maxCreditsPerGeneration: { video: 100 },
    },
  });
  out.created = ads;
  out.merged = await client.routers.update(ads.id, { settings: { optimizeFor: 'cost' } });
  out.renamed = await client.routers.update(ads.id, { name: 'Ads (cheap)', description: null });
  const listed = [];
  for await (const r of client.routers.list({ limit: 1 })) listed.push(r.slug);
  out.listed = listed;
  out.retrieved = await client.routers.retrieve(ads.id);
  await client.routers.delete(out.plain.id);
  out.duplicate = await failure(client.routers.create({ slug: 'ads-video' }), ConflictError);
  out.unknownModel = await failure(
    client.routers.create({ slug: 'x', settings: { models: { mode: 'allowlist_only', ids: ['nope'] } } }),
    BadRequestError);
  out.missing = await failure(client.routers.retrieve(out.plain.id), NotFoundError);

  // Routed generation.
  const media = await client.routers.create({
    slug: 'media',
    settings: { optimizeFor: 'cost', maxCreditsPerGeneration: { image: 8 } },
  });
  const input = { promptText: 'a lighthouse at dusk', aspectRatio: '16:9' };
  out.dryRun = await client.post('/v1/generate/image', {
    body: { configId: 'media', dryRun: true, input },
  });
  const pending = client.generate.image.create({ configId: 'media', input });
  const started = await pending;
  out.routed = { id: started.id, dryRun: started.dryRun, routing: started.routing };
  const task = await pending.waitForTaskOutput({ timeout: 120000 });
  out.task = { status: task.status, outputs: task.output.length };
  const speech = await client.generate.audio.create({
    configId: 'media',
    input: { type: 'speech', promptText: 'Routed through genhost.', voice: { type: 'preset', presetId: 'Maya' } },
  });
  out.speech = speech.routing;
  out.noEligible = await failure(
    client.generate.video.create({ configId: 'media', input: { promptText: 'x', duration: 30, resolution: '4k' } }),
    BadRequestError);
  out.unknownRouter = await failure(
    client.generate.image.create({ configId: 'nobody', input: { promptText: 'x' } }), NotFoundError);
  out.log = await client.get(`/v1/routers/${media.id}/requests`, { query: { limit: 10 } });
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
