/**
 * The local Kubernetes API server over plain HTTP: discovery, server-side apply with field
 * ownership and conflicts, dry runs, namespaces, label selectors, watches, CRDs becoming servable,
 * RBAC refusals and the `/status` subresource.
 */
import {
  startKubeApiServer,
  waitFor,
  type KubeApiServer,
} from "@flotilla/testkit";
import { describe, expect, test } from "vitest";

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

async function call(
  server: KubeApiServer,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/apply-patch+yaml",
): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
  };
}

const cm = (
  name: string,
  data: Record<string, string>,
  labels: Record<string, string> = {},
) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, labels },
  data,
});
const cmPath = (name: string, query = "fieldManager=a") =>
  `/api/v1/namespaces/default/configmaps/${name}?${query}`;

describe("the local Kubernetes API server", () => {
  test("serves discovery for the core group, the groups and each group version", async () => {
    await using server = await startKubeApiServer();
    expect((await call(server, "GET", "/api")).body.versions).toEqual(["v1"]);
    const groups = (await call(server, "GET", "/apis")).body.groups as {
      name: string;
    }[];
    expect(groups.map((g) => g.name)).toEqual([
      "apps",
      "batch",
      "apiextensions.k8s.io",
      "apiregistration.k8s.io",
    ]);
    const apps = (await call(server, "GET", "/apis/apps/v1")).body
      .resources as { name: string; namespaced: boolean }[];
    expect(apps).toContainEqual(
      expect.objectContaining({ name: "deployments", namespaced: true }),
    );
    expect(apps.map((r) => r.name)).toContain("deployments/status");
    expect((await call(server, "GET", "/apis/example.com/v1")).status).toBe(
      404,
    );
  });

  test("applies, bumps resourceVersion and generation only on change, and prunes fields a manager stops setting", async () => {
    await using server = await startKubeApiServer();
    const first = await call(
      server,
      "PATCH",
      cmPath("c"),
      cm("c", { x: "1", y: "2" }),
    );
    expect(first.status).toBe(200);
    const again = await call(
      server,
      "PATCH",
      cmPath("c"),
      cm("c", { x: "1", y: "2" }),
    );
    expect(
      (again.body.metadata as Record<string, unknown>).resourceVersion,
    ).toBe((first.body.metadata as Record<string, unknown>).resourceVersion);
    const dropped = await call(
      server,
      "PATCH",
      cmPath("c"),
      cm("c", { x: "1" }),
    );
    expect(dropped.body.data).toEqual({ x: "1" });
    expect((dropped.body.metadata as Record<string, unknown>).generation).toBe(
      2,
    );
  });

  test("answers 409 when another manager owns a field with a different value, unless forced", async () => {
    await using server = await startKubeApiServer();
    await call(server, "PATCH", cmPath("c"), cm("c", { x: "1" }));
    server.edit("ConfigMap", "default", "c", (o) => {
      (o.data as Record<string, string>).x = "2";
    });
    const refused = await call(
      server,
      "PATCH",
      cmPath("c"),
      cm("c", { x: "1" }),
    );
    expect(refused).toMatchObject({
      status: 409,
      body: {
        kind: "Status",
        reason: "Conflict",
        message:
          'Apply failed with 1 conflict: conflict with "kubectl-edit": .data.x',
      },
    });
    const forced = await call(
      server,
      "PATCH",
      cmPath("c", "fieldManager=a&force=true"),
      cm("c", { x: "1" }),
    );
    expect(forced.body.data).toEqual({ x: "1" });
  });

  test("answers 422 to a write that changes an immutable field, even forced; other fields still change", async () => {
    await using server = await startKubeApiServer();
    server.immutable("ConfigMap", "data.x");
    await call(server, "PATCH", cmPath("c"), cm("c", { x: "1", y: "1" }));
    const refused = await call(
      server,
      "PATCH",
      cmPath("c", "fieldManager=a&force=true"),
      cm("c", { x: "2", y: "1" }),
    );
    expect(refused).toMatchObject({
      status: 422,
      body: {
        reason: "Invalid",
        message:
          'ConfigMap "c" is invalid: data.x: Invalid value: "2": field is immutable',
      },
    });
    expect(() => {
      server.edit("ConfigMap", "default", "c", (o) => {
        (o.data as Record<string, string>).x = "3";
      });
    }).toThrow("field is immutable");
    const changed = await call(
      server,
      "PATCH",
      cmPath("c"),
      cm("c", { x: "1", y: "2" }),
    );
    expect(changed.body.data).toEqual({ x: "1", y: "2" });
    // Deleted and created again, the object takes the new value.
    server.remove("ConfigMap", "default", "c");
    const created = await call(
      server,
      "PATCH",
      cmPath("c"),
      cm("c", { x: "2", y: "2" }),
    );
    expect(created.body.data).toEqual({ x: "2", y: "2" });
  });

  test("stores nothing on a dry run, and refuses objects in a missing namespace", async () => {
    await using server = await startKubeApiServer();
    const dry = await call(
      server,
      "PATCH",
      cmPath("c", "fieldManager=a&dryRun=All"),
      cm("c", { x: "1" }),
    );
    expect(dry.status).toBe(200);
    expect(server.object("ConfigMap", "default", "c")).toBeUndefined();
    const missing = await call(
      server,
      "PATCH",
      "/api/v1/namespaces/nope/configmaps/c?fieldManager=a",
      cm("c", {}),
    );
    expect(missing).toMatchObject({
      status: 404,
      body: { message: 'namespaces "nope" not found' },
    });
  });

  test("filters lists by label selector and leaves kind and apiVersion out of items", async () => {
    await using server = await startKubeApiServer();
    server.put(cm("a", {}, { tier: "web" }));
    server.put(cm("b", {}, { tier: "db" }));
    server.put(cm("c", {}, {}));
    const list = await call(
      server,
      "GET",
      "/api/v1/namespaces/default/configmaps?labelSelector=tier%20in%20(web,db)",
    );
    const items = list.body.items as {
      metadata: { name: string };
      kind?: string;
    }[];
    expect(items.map((i) => i.metadata.name)).toEqual(["a", "b"]);
    expect(items[0]?.kind).toBeUndefined();
    expect(
      (await call(server, "GET", "/api/v1/configmaps?labelSelector=tier%3Ddb"))
        .body.items,
    ).toHaveLength(1);
  });

  test("streams watch events: existing objects first, then changes, and DELETED when an object leaves the selector", async () => {
    await using server = await startKubeApiServer();
    server.put(cm("a", {}, { app: "x" }));
    const response = await fetch(
      `${server.url}/api/v1/namespaces/default/configmaps?watch=1&labelSelector=app%3Dx`,
    );
    const events: string[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffered = "";
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk);
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) {
          const event = JSON.parse(line) as {
            type: string;
            object: { metadata: { name: string } };
          };
          events.push(`${event.type} ${event.object.metadata.name}`);
        }
      }
    })();
    await waitFor(() => events.length === 1);
    server.put(cm("b", {}, { app: "x" }));
    server.edit("ConfigMap", "default", "a", (o) => {
      (o.metadata as { labels: Record<string, string> }).labels = {};
    });
    server.remove("ConfigMap", "default", "b");
    await waitFor(() => events.length === 4);
    expect(events).toEqual(["ADDED a", "ADDED b", "DELETED a", "DELETED b"]);
    await server.close();
    await reading;
  });

  test("serves a CRD's kind only once it is Established", async () => {
    await using server = await startKubeApiServer({
      crdEstablishment: "manual",
    });
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgets.example.com" },
      spec: {
        group: "example.com",
        scope: "Cluster",
        names: { kind: "Widget", plural: "widgets" },
        versions: [{ name: "v1", served: true }],
      },
    };
    expect(
      (
        await call(
          server,
          "PATCH",
          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com?fieldManager=a",
          crd,
        )
      ).status,
    ).toBe(200);
    const widget = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w" },
    };
    expect(
      (
        await call(
          server,
          "PATCH",
          "/apis/example.com/v1/widgets/w?fieldManager=a",
          widget,
        )
      ).status,
    ).toBe(404);
    server.establishCrd("widgets.example.com");
    expect(
      (
        await call(
          server,
          "PATCH",
          "/apis/example.com/v1/widgets/w?fieldManager=a",
          widget,
        )
      ).status,
    ).toBe(200);
    server.remove("CustomResourceDefinition", "", "widgets.example.com");
    expect(server.objects("Widget")).toEqual([]);
  });

  test("answers 403 to a forbidden verb and resource, and writes status through the subresource", async () => {
    await using server = await startKubeApiServer();
    server.forbid("delete", "configmaps");
    server.put(cm("a", {}));
    const denied = await call(
      server,
      "DELETE",
      "/api/v1/namespaces/default/configmaps/a",
    );
    expect(denied).toMatchObject({
      status: 403,
      body: { reason: "Forbidden" },
    });
    server.put({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d", namespace: "default" },
      spec: { replicas: 1 },
    });
    const patched = await call(
      server,
      "PATCH",
      "/apis/apps/v1/namespaces/default/deployments/d/status",
      { status: { readyReplicas: 1 } },
      "application/merge-patch+json",
    );
    expect(patched.body).toMatchObject({
      status: { readyReplicas: 1 },
      metadata: { generation: 1 },
    });
  });
});
