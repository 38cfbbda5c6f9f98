/**
 * The registry's listeners: changes reach every listener after the registry dropped its cached
 * list, unsubscribed listeners hear nothing, and revocations reach the session listeners.
 */
import { describe, expect, it } from "vitest";
import {
  createClusterListeners,
  type ClusterChange,
} from "../src/clusters/cluster-listeners.js";

describe("cluster listeners", () => {
  it("runs beforeEmit first, then every listener still subscribed", () => {
    const heard: string[] = [];
    const listeners = createClusterListeners(() => heard.push("before"));
    const stop = listeners.onChange((c: ClusterChange) => {
      heard.push(`a:${c.type}`);
    });
    listeners.onChange((c) => heard.push(`b:${c.type}`));
    listeners.emit({ type: "joined", cluster: "c-1" });
    stop();
    listeners.emit({ type: "left", cluster: "c-1" });
    expect(heard).toEqual([
      "before",
      "a:joined",
      "b:joined",
      "before",
      "b:left",
    ]);
  });

  it("tells every session listener which session ends and why", () => {
    const listeners = createClusterListeners(() => undefined);
    const heard: unknown[] = [];
    listeners.onSessionRevoked((session, why) => heard.push([session, why]));
    listeners.revoke({ cluster: "c-1", id: 4 }, "replaced");
    expect(heard).toEqual([[{ cluster: "c-1", id: 4 }, "replaced"]]);
  });
});
