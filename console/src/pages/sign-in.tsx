import { useState } from "preact/hooks";
import { api, type Credentials } from "../api";
import { useAction } from "../parts/load";
import { Problem } from "../parts/ui";

/** Sign in with API credentials; they are checked by one call to the API and kept for this tab only. */
export function SignIn({ onSignedIn }: { onSignedIn: (who: Credentials) => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const who = { username: username.trim(), password };
    const ok = await action.run(() => api("GET", "/v1/webhooks/?page_size=1", undefined, who));
    if (ok !== undefined) onSignedIn(who);
  };
  return (
    <main class="sign-in" id="main">
      <form class="card sign-in-card" onSubmit={submit} aria-labelledby="sign-in-title">
        <div class="brand">
          <span class="logo" aria-hidden="true">
            ◆
          </span>{" "}
          Payments <span class="brand-sub">console</span>
        </div>
        <h1 id="sign-in-title" tabIndex={-1}>
          Sign in
        </h1>
        <p class="muted">Use your API user's credentials. They are sent only to this service, as HTTP Basic, and forgotten when you close this tab.</p>
        <Problem error={action.error} />
        <label>
          Username
          <input name="username" autoComplete="username" required value={username} onInput={(event) => setUsername(event.currentTarget.value)} />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(event) => setPassword(event.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={action.busy}>
          {action.busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
