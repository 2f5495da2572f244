import { describe, expect, it } from "vitest";
import { parseIpv6, refuseWebhookUrl } from "../../src/lib/url-policy";

describe("webhook URL policy", () => {
  it.each([
    "https://hooks.example.com/payments",
    "https://example.com:8443/x?y=1",
    "https://example.com:443/x",
    "https://example.com:80/x",
    "https://example.com:1024/x",
    "https://example.com:65535/x",
    "https://hooks.example.com./trailing-dot",
    "https://8.8.8.8/hook",
    "https://[2606:4700:4700::1111]/hook",
    "https://[::ffff:8.8.8.8]/mapped-public",
    "https://[64:ff9b::808:808]/nat64-public",
    "https://[2002:808:808::1]/6to4-public",
  ])("accepts %s", (url) => {
    expect(refuseWebhookUrl(url, false)).toBeNull();
  });

  it.each([
    ["http://hooks.example.com/", "https"],
    ["https://user:pass@hooks.example.com/", "username or password"],
    ["https://user@hooks.example.com/", "username or password"],
    ["ftp://example.com/x", "valid URL"],
    ["/relative/path", "valid URL"],
    ["not a url", "valid URL"],
    // names
    ["https://localhost/hook", "localhost"],
    ["https://LOCALHOST./hook", "localhost"],
    ["https://localhost../hook", "localhost"],
    ["https://localhost.../hook", "localhost"],
    ["https://api.localhost/hook", "localhost"],
    ["https://localhost.localdomain/hook", "localhost"],
    ["https://intranet/hook", "fully qualified"],
    ["https://printer/hook", "fully qualified"],
    ["https://metadata.google.internal/computeMetadata/v1/", ".internal"],
    ["https://payments.internal/hook", ".internal"],
    ["https://nas.local/hook", ".local"],
    ["https://router.lan/hook", ".lan"],
    ["https://box.home/hook", ".home"],
    ["https://1.0.0.127.in-addr.arpa/hook", ".arpa"],
    ["https://router.home.arpa/hook", ".arpa"],
    ["https://hooks.test/hook", ".test"],
    ["https://hooks.example/hook", ".example"],
    // IPv4 in every spelling the URL parser takes
    ["https://127.0.0.1/hook", "non-public"],
    ["https://127.0.0.1./hook", "non-public"],
    ["https://127.1.2.3/hook", "non-public"],
    ["https://127.1/hook", "non-public"],
    ["https://2130706433/hook", "non-public"],
    ["https://0x7f000001/hook", "non-public"],
    ["https://0x7f.0.0.1/hook", "non-public"],
    ["https://0177.0.0.1/hook", "non-public"],
    ["https://017700000001/hook", "non-public"],
    ["https://10.0.0.5/hook", "non-public"],
    ["https://172.16.0.1/hook", "non-public"],
    ["https://172.31.255.255/hook", "non-public"],
    ["https://192.168.1.1/hook", "non-public"],
    ["https://169.254.169.254/latest/meta-data", "non-public"],
    ["https://100.64.0.1/hook", "non-public"],
    ["https://0.0.0.0/hook", "non-public"],
    ["https://0/hook", "non-public"],
    ["https://224.0.0.1/hook", "non-public"],
    ["https://255.255.255.255/hook", "non-public"],
    ["https://192.0.2.1/hook", "non-public"],
    ["https://198.18.0.1/hook", "non-public"],
    // IPv6, and IPv6 that carries a non-public IPv4 address
    ["https://[::1]/hook", "non-public"],
    ["https://[::]/hook", "non-public"],
    ["https://[0:0:0:0:0:0:0:1]/hook", "non-public"],
    ["https://[fe80::1]/hook", "non-public"],
    ["https://[fec0::1]/site-local", "non-public"],
    ["https://[fd00::1]/hook", "non-public"],
    ["https://[ff02::1]/multicast", "non-public"],
    ["https://[100::1]/discard", "non-public"],
    ["https://[::ffff:127.0.0.1]/hook", "non-public"],
    ["https://[::ffff:7f00:1]/hook", "non-public"],
    ["https://[0:0:0:0:0:ffff:127.0.0.1]/hook", "non-public"],
    ["https://[::ffff:10.0.0.1]/hook", "non-public"],
    ["https://[::127.0.0.1]/compatible", "non-public"],
    ["https://[::7f00:1]/compatible", "non-public"],
    ["https://[::8.8.8.8]/compatible-public", "non-public"],
    ["https://[64:ff9b::7f00:1]/nat64", "non-public"],
    ["https://[64:ff9b::127.0.0.1]/nat64", "non-public"],
    ["https://[64:ff9b::a00:1]/nat64", "non-public"],
    ["https://[64:ff9b:1::808:808]/local-nat64", "non-public"],
    ["https://[2002:7f00:1::]/6to4", "non-public"],
    ["https://[2002:c0a8:101::1]/6to4", "non-public"],
    ["https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/teredo", "non-public"],
    ["https://[2001:db8::1]/doc", "non-public"],
    ["https://[3fff::1]/doc", "non-public"],
    ["https://[2001:2::1]/benchmarking", "non-public"],
    ["https://[2001:10::1]/orchid", "non-public"],
    // ports
    ["https://example.com:0/hook", "port"],
    ["https://example.com:22/hook", "port"],
    ["https://example.com:25/hook", "port"],
    ["https://example.com:1023/hook", "port"],
  ])("refuses %s", (url, reason) => {
    expect(refuseWebhookUrl(url, false)).toContain(reason);
  });

  it("lets http, loopback and any port through when local URLs are allowed, but never user-info", () => {
    expect(refuseWebhookUrl("http://127.0.0.1:9999/hooks", true)).toBeNull();
    expect(refuseWebhookUrl("http://localhost:9999/hooks", true)).toBeNull();
    expect(refuseWebhookUrl("http://127.0.0.1:80/hooks", true)).toBeNull();
    expect(refuseWebhookUrl("http://a:b@127.0.0.1/hooks", true)).toContain("username or password");
  });
});

describe("parseIpv6", () => {
  it.each([
    ["::", [0, 0, 0, 0, 0, 0, 0, 0]],
    ["::1", [0, 0, 0, 0, 0, 0, 0, 1]],
    ["2001:db8::8:800:200c:417a", [0x2001, 0xdb8, 0, 0, 8, 0x800, 0x200c, 0x417a]],
    ["fe80::", [0xfe80, 0, 0, 0, 0, 0, 0, 0]],
    ["::ffff:127.0.0.1", [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]],
    ["64:ff9b::10.0.0.1", [0x64, 0xff9b, 0, 0, 0, 0, 0x0a00, 1]],
    ["1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]],
    ["1:2:3:4:5:6:1.2.3.4", [1, 2, 3, 4, 5, 6, 0x102, 0x304]],
  ])("reads %s", (text, groups) => {
    expect(parseIpv6(text)).toEqual(groups);
  });

  it.each(["1:2:3:4:5:6:7", "1::2::3", "12345::", "g::1", "1:2:3:4:5:6:7:8:9", "::1.2.3.256"])("refuses %s", (text) => {
    expect(parseIpv6(text)).toBeNull();
  });
});
