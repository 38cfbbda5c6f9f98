import { createManualClock } from "@flotilla/node/testing";
import { createMemoryLeaseBucket } from "@flotilla/hub/testing";
import { describeLeaseBucketContract } from "./lease-bucket.contract.js";

describeLeaseBucketContract("in memory", () => {
  const clock = createManualClock();
  return {
    async open() {
      const bucket = createMemoryLeaseBucket({ ttlMs: 1_000, clock });
      await bucket.start();
      return bucket;
    },
    expire: () => clock.advance(1_000),
  };
});
