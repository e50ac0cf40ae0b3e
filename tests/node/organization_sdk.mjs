// Drives the official Node client (@runwayml/sdk, pinned in package.json) against a running
// genhost as a new user would: organization.retrieve and retrieveUsage, every recipes.* method
// with its task waited for through waitForTaskOutput, the organization again (balance and the
// day's generations moved), a recipe with a bad body and a task that does not exist.
//
// Run by the gtest NodeSdk.* (tests/http/uploads_test.cpp) through run_node_sdk.sh.
// Environment: GENHOST_URL, GENHOST_KEY, GENHOST_PNG (a picture), GENHOST_MP4 (a short video).
// Prints one JSON line with what it saw, or {"error": {...}}; exits 1 on an unexpected error.
import { BadRequestError, NotFoundError } from '@runwayml/sdk';
import { client, failure } from './sdk_common.mjs';
import { readFileSync } from 'node:fs';

const image = { uri: `data:image/png;base64,${readFileSync(process.env.GENHOST_PNG).toString('base64')}` };
const video = { uri: `data:video/mp4;base64,${readFileSync(process.env.GENHOST_MP4).toString('base64')}` };

const out = {};
try {
  out.before = await client.organization.retrieve();
  const recipes = {
    adLocalization: client.recipes.adLocalization({
      referenceImage: image, targetLanguage: 'fr', version: '2026-06',
    }),
    marketingStockImage: client.recipes.marketingStockImage({
      prompt: 'a red bicycle against a white wall, for a spring sale', version: '2026-06',
      outputCount: 2, quality: 'low',
    }),
    multiShotVideo: client.recipes.multiShotVideo({
      mode: 'custom', version: '2026-06', duration: 5, audio: true,
      shots: [
        { prompt: 'a bicycle leaning on a wall', duration: 1 },
        { prompt: 'a rider picks it up', duration: 2 },
        { prompt: 'the rider rides away', duration: 2 },
      ],
    }),
    productAd: client.recipes.productAd({ productImages: [image], version: '2026-07', duration: 4 }),
    productCampaignImage: client.recipes.productCampaignImage({
      image, prompt: 'bold summer colours', version: 'unsafe-latest',
    }),
    productSwap: client.recipes.productSwap({
      newProductImages: [image], originalProductImage: image, referenceVideo: video,
      version: '2026-06', duration: 4,
    }),
    productUgc: client.recipes.productUgc({
      characterImage: image, productImage: image, version: '2026-06', duration: 4,
    }),
  };
  // Every recipe's task waited for at once, as its own waiter polls it.
  out.recipes = Object.fromEntries(await Promise.all(Object.entries(recipes).map(
    async ([name, created]) => {
      const { id } = await created;
      const done = await created.waitForTaskOutput({ timeout: 240000 });
      return [name, { id, status: done.status, outputs: done.output.length }];
    })));
  out.usage = await client.organization.retrieveUsage({});
  out.after = await client.organization.retrieve();
  out.badBody = await failure(
    client.recipes.productAd({ productImages: [], version: '2026-05' }),
    BadRequestError);
  out.badRange = await failure(
    client.organization.retrieveUsage({ startDate: '2026-01-01', beforeDate: '2026-06-01' }),
    BadRequestError);
  out.missing = await failure(
    client.tasks.retrieve('00000000-0000-4000-8000-000000000000'),
    NotFoundError);
} catch (e) {
  out.error = { name: e.constructor.name, message: e.message, status: e.status, body: e.error };
}
console.log(JSON.stringify(out));
process.exit(out.error ? 1 : 0);
