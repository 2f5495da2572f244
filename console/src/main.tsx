import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { credentials, keepCredentials, type Credentials } from "./api";
import { href, match, usePlace } from "./router";
import { SignIn } from "./pages/sign-in";
import { Subscriptions } from "./pages/subscriptions";
import { SubscriptionPage } from "./pages/subscription";
import { DeliveryPage } from "./pages/delivery";
import { Payments } from "./pages/payments";
import { PaymentPage } from "./pages/payment";
import { Counterparties } from "./pages/counterparties";
import { CounterpartyPage } from "./pages/counterparty";
import { Invoices } from "./pages/invoices";
import { InvoicePage } from "./pages/invoice";
import { SearchBox } from "./parts/search-box";
import "./style.css";

function App() {
  const [who, setWho] = useState<Credentials | null>(credentials);
  const place = usePlace();
  useEffect(() => {
    const signedOut = () => setWho(null);
    window.addEventListener("console:signed-out", signedOut);
    return () => window.removeEventListener("console:signed-out", signedOut);
  }, []);
  useEffect(() => {
    document.querySelector<HTMLElement>("main h1")?.focus();
  }, [place.path]);

  if (!who) {
    return (
      <SignIn
        onSignedIn={(value) => {
          keepCredentials(value);
          setWho(value);
        }}
      />
    );
  }
  const signOut = () => {
    keepCredentials(null);
    setWho(null);
  };
  const section = ["payments", "counterparties", "invoices"].find((name) => place.path.startsWith(`/${name}`)) ?? "webhooks";
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(event) => (event.preventDefault(), document.getElementById("main")?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href("/")}>
          <span class="logo" aria-hidden="true">
            ◆
          </span>{" "}
          Payments <span class="brand-sub">console</span>
        </a>
        <nav aria-label="Sections">
          <a href={href("/")} aria-current={section === "webhooks" ? "page" : undefined}>
            Webhooks
          </a>
          <a href={href("/payments")} aria-current={section === "payments" ? "page" : undefined}>
            Payments
          </a>
          <a href={href("/counterparties")} aria-current={section === "counterparties" ? "page" : undefined}>
            Counterparties
          </a>
          <a href={href("/invoices")} aria-current={section === "invoices" ? "page" : undefined}>
            Invoices
          </a>
        </nav>
        <SearchBox />
        <div class="who">
          <span title="Signed in for this browser tab only">{who.username}</span>
          <button type="button" class="secondary small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Route path={place.path} query={place.query} />
      </main>
    </div>
  );
}

function Route({ path, query }: { path: string; query: URLSearchParams }) {
  let found: Record<string, string> | null;
  if ((found = match("/subscriptions/:id/deliveries/:delivery", path))) return <DeliveryPage subscriptionId={found.id!} deliveryId={found.delivery!} />;
  if ((found = match("/subscriptions/:id", path))) return <SubscriptionPage id={found.id!} query={query} />;
  if ((found = match("/payments/:id", path))) return <PaymentPage id={found.id!} />;
  if (match("/payments", path)) return <Payments query={query} />;
  if ((found = match("/counterparties/:id", path))) return <CounterpartyPage id={found.id!} />;
  if (match("/counterparties", path)) return <Counterparties query={query} />;
  if ((found = match("/invoices/:id", path))) return <InvoicePage id={found.id!} />;
  if (match("/invoices", path)) return <Invoices query={query} />;
  if (match("/", path) || match("/subscriptions", path)) return <Subscriptions />;
  return (
    <div>
      <h1 tabIndex={-1}>Not found</h1>
      <p>
        Nothing lives at this address. <a href={href("/")}>Go to the webhooks</a>.
      </p>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
