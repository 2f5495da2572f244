/**
 * The webhook URL policy, checked when a subscription is saved and again before each attempt:
 * - http(s) only, no user-info; `https` unless local URLs are allowed;
 * - a port of 443, 80, or 1024 and above (well-known service ports and port 0 are refused);
 * - no host that is `localhost`, a single label, or a name under a special-use or private
 *   top-level name (`.local`, `.internal`, `.lan`, `.arpa`, …);
 * - no IP literal that is not public: IPv4 private, loopback, link-local, shared, reserved and
 *   documentation ranges, and every IPv6 address outside global unicast (2000::/3), plus the IPv6
 *   forms that carry an IPv4 address inside (mapped, compatible, NAT64, 6to4, Teredo) unless that
 *   IPv4 address is public.
 * The WHATWG URL parser has already turned decimal, hex, octal and short IPv4 spellings into dotted
 * quads and IPv6 into canonical hex, so every disguise arrives here in one form.
 * `allowLocal` (ALLOW_LOCAL_WEBHOOK_URLS) lifts all but the first rule for local work.
 * Names are not resolved: a public name that resolves to a private address (`127.0.0.1.nip.io`) is
 * refused by Cloudflare's own fetch in production (error 1000, "DNS points to prohibited IP").
 * Returns the reason a URL is refused, or null.
 */
export function refuseWebhookUrl(text: string, allowLocal: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "Enter a valid URL.";
  }
  if (!/^https?:\/\//i.test(text.trim())) return "Enter a valid URL.";
  if (url.username || url.password) return "The URL must not contain a username or password.";
  if (allowLocal) return null;
  if (url.protocol !== "https:") return "The URL must use https.";
  if (url.port && !allowedPort(Number(url.port))) return "The URL's port must be 443, 80, or 1024 and above.";
  const host = url.hostname.toLowerCase().replace(/\.+$/, "");
  if (host.startsWith("[")) {
    const groups = parseIpv6(host.slice(1, -1));
    return groups && isPublicIpv6(groups) ? null : NON_PUBLIC;
  }
  const v4 = parseIpv4(host);
  if (v4) return isPublicIpv4(v4) ? null : NON_PUBLIC;
  if (/^[0-9.]+$/.test(host) || /^0x/i.test(host)) return NON_PUBLIC;
  return refuseName(host);
}

const NON_PUBLIC = "The URL must not point at a non-public address.";

/** Top-level names that are not on the public internet (RFC 6761, 6762, 8375, 9476 and common private use). */
const PRIVATE_TLDS = new Set([
  "localhost",
  "localdomain",
  "local",
  "internal",
  "intranet",
  "lan",
  "home",
  "corp",
  "private",
  "arpa",
  "test",
  "invalid",
  "example",
  "onion",
  "alt",
]);

export function allowedPort(port: number): boolean {
  return port === 443 || port === 80 || (port >= 1024 && port <= 65535);
}

function refuseName(host: string): string | null {
  const labels = host.split(".");
  const tld = labels.at(-1)!;
  if (tld === "localhost" || labels.includes("localhost")) return "The URL must not point at localhost.";
  if (labels.length < 2) return "The URL's host must be a public, fully qualified name.";
  if (PRIVATE_TLDS.has(tld)) return `The URL's host must be a public name, not one under .${tld}.`;
  return null;
}

export function parseIpv4(host: string): number[] | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.map(Number);
}

export function isPublicIpv4(parts: number[]): boolean {
  const [a = 0, b = 0, c = 0] = parts;
  if (a === 0 || a === 10 || a === 127 || a >= 224) return false; // this network, private, loopback, multicast, reserved
  if (a === 100 && b >= 64 && b <= 127) return false; // carrier-grade NAT
  if (a === 169 && b === 254) return false; // link-local
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false; // IETF, TEST-NET-1
  if (a === 192 && b === 88 && c === 99) return false; // 6to4 relay anycast
  if (a === 198 && (b === 18 || b === 19)) return false; // benchmarking
  if (a === 198 && b === 51 && c === 100) return false; // TEST-NET-2
  if (a === 203 && b === 0 && c === 113) return false; // TEST-NET-3
  return true;
}

/** Eight 16-bit groups, or null. Takes `::` and a trailing dotted quad. */
export function parseIpv6(text: string): number[] | null {
  let tail: number[] = [];
  let rest = text;
  const quad = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const v4 = parseIpv4(quad[2]!);
    if (!v4) return null;
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
    rest = quad[1]!.endsWith("::") ? quad[1]! : quad[1]!.slice(0, -1);
  }
  const halves = rest.split("::");
  if (halves.length > 2) return null;
  const read = (part: string) => (part === "" ? [] : part.split(":").map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)));
  const head = read(halves[0]!);
  const back = halves.length === 2 ? read(halves[1]!) : [];
  const known = head.length + back.length + tail.length;
  if ([...head, ...back].some(Number.isNaN)) return null;
  if (halves.length === 1 ? known !== 8 : known > 7) return null;
  return [...head, ...Array(8 - known).fill(0), ...back, ...tail];
}

const v4Of = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff];

export function isPublicIpv6(g: number[]): boolean {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return isPublicIpv4(v4Of(g[6]!, g[7]!)); // IPv4-mapped ::ffff:0:0/96
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return isPublicIpv4(v4Of(g[6]!, g[7]!)); // NAT64 64:ff9b::/96
  if (g[0] === 0x2002) return isPublicIpv4(v4Of(g[1]!, g[2]!)); // 6to4 2002::/16
  if ((g[0]! & 0xe000) !== 0x2000) return false; // not global unicast: ::/8 (compatible, loopback), 64:ff9b:1::/48, 100::/64, fc00::/7, fe80::/10, fec0::/10, ff00::/8
  if (g[0] === 0x2001) {
    const second = g[1]!;
    if (second === 0) return false; // Teredo 2001::/32: its client and server IPv4 addresses are not checked, it is refused whole
    if (second === 0x2 && g[2] === 0) return false; // benchmarking 2001:2::/48
    if ((second & 0xfff0) === 0x10 || (second & 0xfff0) === 0x20) return false; // ORCHID 2001:10::/28, 2001:20::/28
    if (second === 0xdb8) return false; // documentation 2001:db8::/32
  }
  if (g[0] === 0x3fff && (g[1]! & 0xf000) === 0) return false; // documentation 3fff::/20
  return true;
}
