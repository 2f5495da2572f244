import { describe, expect, it } from "vitest";
import { refuseWebhookUrl } from "../../src/lib/url-policy";

describe("webhook URL policy", () => {
  it.each([
    "https://hooks.example.com/payments",
    "https://example.com:8443/x?y=1",
    "https://8.8.8.8/hook",
    "https://[2606:4700:4700::1111]/hook",
  ])("accepts %s", (url) => {
    expect(refuseWebhookUrl(url, false)).toBeNull();
  });

  it.each([
    ["http://hooks.example.com/", "https"],
    ["https://user:pass@hooks.example.com/", "username or password"],
    ["https://user@hooks.example.com/", "username or password"],
    ["https://localhost/hook", "localhost"],
    ["https://LOCALHOST./hook", "localhost"],
    ["https://api.localhost/hook", "localhost"],
    ["https://127.0.0.1/hook", "non-public"],
    ["https://127.1.2.3/hook", "non-public"],
    ["https://10.0.0.5/hook", "non-public"],
    ["https://172.16.0.1/hook", "non-public"],
    ["https://172.31.255.255/hook", "non-public"],
    ["https://192.168.1.1/hook", "non-public"],
    ["https://169.254.169.254/latest/meta-data", "non-public"],
    ["https://100.64.0.1/hook", "non-public"],
    ["https://0.0.0.0/hook", "non-public"],
    ["https://224.0.0.1/hook", "non-public"],
    ["https://[::1]/hook", "non-public"],
    ["https://[fe80::1]/hook", "non-public"],
    ["https://[fd00::1]/hook", "non-public"],
    ["https://[::ffff:127.0.0.1]/hook", "non-public"],
    ["https://[::ffff:10.0.0.1]/hook", "non-public"],
    ["https://2130706433/hook", "non-public"],
    ["https://0x7f000001/hook", "non-public"],
    ["ftp://example.com/x", "valid URL"],
    ["/relative/path", "valid URL"],
    ["not a url", "valid URL"],
  ])("refuses %s", (url, reason) => {
    expect(refuseWebhookUrl(url, false)).toContain(reason);
  });

  it("lets http and loopback through when local URLs are allowed, but never user-info", () => {
    expect(refuseWebhookUrl("http://127.0.0.1:9999/hooks", true)).toBeNull();
    expect(refuseWebhookUrl("http://localhost:9999/hooks", true)).toBeNull();
    expect(refuseWebhookUrl("http://a:b@127.0.0.1/hooks", true)).toContain("username or password");
  });
});
