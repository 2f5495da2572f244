/**
 * The webhook URL policy: https only, no user-info, and no host that is `localhost`, a loopback,
 * private, link-local or otherwise non-public IP literal. `allowLocal` (ALLOW_LOCAL_WEBHOOK_URLS)
 * lifts it for local work: http and loopback allowed. Returns the reason a URL is refused, or null.
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
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "The URL must not point at localhost.";
  if (host.startsWith("[")) return isPublicIpv6(host.slice(1, -1)) ? null : "The URL must not point at a non-public address.";
  const v4 = parseIpv4(host);
  if (v4) return isPublicIpv4(v4) ? null : "The URL must not point at a non-public address.";
  if (/^[0-9.]+$/.test(host) || /^0x/i.test(host)) return "The URL must not point at a non-public address.";
  return null;
}

function parseIpv4(host: string): number[] | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.map(Number);
}

function isPublicIpv4(parts: number[]): boolean {
  const [a = 0, b = 0, c = 0] = parts;
  if (a === 0 || a === 10 || a === 127 || a >= 224) return false; // this network, private, loopback, multicast, reserved
  if (a === 100 && b >= 64 && b <= 127) return false; // carrier-grade NAT
  if (a === 169 && b === 254) return false; // link-local
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false; // IETF, TEST-NET-1
  if (a === 198 && (b === 18 || b === 19)) return false; // benchmarking
  if (a === 198 && b === 51 && c === 100) return false; // TEST-NET-2
  if (a === 203 && b === 0 && c === 113) return false; // TEST-NET-3
  return true;
}

function isPublicIpv6(address: string): boolean {
  const text = address.toLowerCase();
  if (text === "::" || text === "::1") return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (mapped) {
    const v4 = parseIpv4(mapped[1]!);
    return v4 ? isPublicIpv4(v4) : false;
  }
  if (text.startsWith("::ffff:")) return false; // mapped v4 in hex form: refuse rather than decode
  const first = parseInt(text.split(":")[0] || "0", 16);
  if ((first & 0xfe00) === 0xfc00) return false; // unique local fc00::/7
  if ((first & 0xffc0) === 0xfe80) return false; // link-local fe80::/10
  if ((first & 0xff00) === 0xff00) return false; // multicast
  if (first === 0x2001 && text.startsWith("2001:db8")) return false; // documentation
  return true;
}
