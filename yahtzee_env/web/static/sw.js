// The service worker (issue 50): the page, its modules, its catalogues and the offline levels
// are cached at the first visit, so that the page opens and plays solo games with no network.
// The server serves this file at /sw.js (scope "/", never cached by HTTP) with two lines put
// in front of it: `self.PRECACHE`, the list of what to cache, and `self.VERSION`, a digest of
// those files; a new version of any of them is a new worker with a new cache, and the old
// cache goes once it takes over.
//   page loads (navigations) and /api/config: the network first, the cache when the server
//     does not answer (the copy says so in a header, `X-Yatzy-From-Cache`: net.js then knows
//     the server is out of reach, whatever `navigator.onLine` says); an answer that is not
//     the server's (a captive portal's redirect, a page where JSON was asked) is not kept;
//   /static/ and /levels/: the cache first (their version is the cache's);
//   everything else (the API, the sockets): the network only.
const CACHE = `yatzy-${self.VERSION}`;
const NETWORK_FIRST = new Set(["/api/config"]);

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await cache.addAll(self.PRECACHE);
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) if (key.startsWith("yatzy-") && key !== CACHE) await caches.delete(key);
    await self.clients.claim();
  })());
});

const FROM_CACHE = "X-Yatzy-From-Cache";

function fromCache(cached) {
  const headers = new Headers(cached.headers);
  headers.set(FROM_CACHE, "1");
  return new Response(cached.body, { status: cached.status, statusText: cached.statusText, headers });
}

function ours(response, key) {
  if (!response.ok || response.redirected) return false;
  const type = response.headers.get("Content-Type") || "";
  return key.startsWith("/api/") ? type.includes("json") : type.includes("html");
}

async function networkFirst(request, key) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (ours(response, key)) await cache.put(key, response.clone());
    return response;
  } catch (err) {
    const cached = await cache.match(key);
    if (cached) return fromCache(cached);
    throw err;
  }
}

async function cacheFirst(request) {
  const cache = await caches.open(CACHE);
  const cached = await cache.match(request);
  if (cached) return cached;
  const response = await fetch(request);
  if (response.ok) await cache.put(request, response.clone());
  return response;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  // every page of the app is the one page (it routes itself): offline, "/" stands for all
  if (request.mode === "navigate") event.respondWith(networkFirst(request, "/"));
  else if (NETWORK_FIRST.has(url.pathname)) event.respondWith(networkFirst(request, url.pathname));
  else if (url.pathname.startsWith("/static/") || url.pathname.startsWith("/levels/")) event.respondWith(cacheFirst(request));
});
