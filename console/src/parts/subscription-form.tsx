import { useState } from "preact/hooks";
import type { ApiError } from "../api";
import { FieldError, Problem } from "./ui";

export const FLAGS = [
  ["payment_status", "Payment status"],
  ["payment_events", "Payment events"],
  ["invoice_ids", "Invoice ids"],
  ["instrument_number", "Instrument number"],
  ["refund_reason", "Refund reason"],
  ["all_payment_details", "All payment details (the whole payment as object)"],
] as const;

export type Flag = (typeof FLAGS)[number][0];

export interface SubscriptionFields {
  event: string;
  /** The filters as JSON text; blank for none. */
  filters: string;
  description: string;
  url: string;
  content_type: string;
  /** hmac or ed25519: chosen when the subscription is made. */
  signing: string;
  username: string;
  password: string;
  flags: Record<Flag, boolean>;
}

export const BLANK: SubscriptionFields = {
  event: "payment.changed",
  filters: "",
  description: "",
  url: "",
  content_type: "application/json",
  signing: "hmac",
  username: "",
  password: "",
  flags: { payment_status: true, payment_events: false, invoice_ids: false, instrument_number: false, refund_reason: false, all_payment_details: false },
};

/** What a form's values send: every field for a new subscription, only what changed for an edit. Pure. */
export function changes(values: SubscriptionFields, before?: SubscriptionFields): Record<string, unknown> {
  const all: Record<string, unknown> = {
    description: values.description.trim() || null,
    url: values.url.trim(),
    content_type: values.content_type,
    username: values.username,
    password: values.password,
    ...values.flags,
  };
  if (!before) return { event: values.event, signing: values.signing, ...all, filters: filtersOf(values.filters) };
  all.event = values.event;
  const was: Record<string, unknown> = {
    event: before.event,
    description: before.description.trim() || null,
    url: before.url,
    content_type: before.content_type,
    username: before.username,
    password: before.password,
    ...before.flags,
  };
  const changed = Object.fromEntries(Object.entries(all).filter(([name, value]) => value !== was[name]));
  return values.filters.trim() === before.filters.trim() ? changed : { ...changed, filters: filtersOf(values.filters) };
}

/** The filters typed, as the API takes them: null when blank; text that is not JSON is sent as it is, for the API to say why. Pure. */
export function filtersOf(text: string): unknown {
  if (text.trim() === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The subscription form, for a new one or an edit. What was typed stays after a failed save, with
 * the API's messages beside the fields they name.
 */
export function SubscriptionForm({
  initial,
  submitLabel,
  onSubmit,
  onCancel,
  error,
  busy,
  editing = false,
}: {
  initial: SubscriptionFields;
  /** An edit: the signing scheme is shown, not changed. */
  editing?: boolean;
  submitLabel: string;
  onSubmit: (values: SubscriptionFields) => void;
  onCancel?: () => void;
  error: ApiError | null;
  busy: boolean;
}) {
  const [values, setValues] = useState(initial);
  const set = (patch: Partial<SubscriptionFields>) => setValues((current) => ({ ...current, ...patch }));
  const fields = error?.fields ?? {};
  return (
    <form
      class="form"
      onSubmit={(event) => {
        event.preventDefault();
        onSubmit(values);
      }}
    >
      <Problem error={error} title="Not saved:" />
      <label>
        Description <span class="muted small">(optional: a name for people)</span>
        <input
          name="description"
          maxLength={190}
          placeholder="ERP sync (production)"
          value={values.description}
          onInput={(event) => set({ description: event.currentTarget.value })}
          aria-invalid={Boolean(fields.description)}
        />
        <FieldError messages={fields.description} />
      </label>
      <label>
        Endpoint URL
        <input
          name="url"
          type="url"
          required
          placeholder="https://example.com/hooks/payments"
          value={values.url}
          onInput={(event) => set({ url: event.currentTarget.value })}
          aria-invalid={Boolean(fields.url)}
        />
        <FieldError messages={fields.url} />
      </label>
      <div class="row">
        <label>
          Signing
          <select name="signing" value={values.signing} disabled={editing} onChange={(event) => set({ signing: event.currentTarget.value })}>
            <option value="hmac">HMAC (a shared secret)</option>
            <option value="ed25519">Ed25519 (a public key)</option>
          </select>
          {editing && <span class="muted small">chosen when the subscription was made</span>}
          <FieldError messages={fields.signing} />
        </label>
        <label>
          Content type
          <select name="content_type" value={values.content_type} onChange={(event) => set({ content_type: event.currentTarget.value })}>
            <option value="application/json">JSON</option>
            <option value="application/x-www-form-urlencoded">Form (x-www-form-urlencoded)</option>
          </select>
          <FieldError messages={fields.content_type} />
        </label>
        <label>
          Receiver username
          <input
            name="username"
            required
            autoComplete="off"
            value={values.username}
            onInput={(event) => set({ username: event.currentTarget.value })}
            aria-invalid={Boolean(fields.username)}
          />
          <FieldError messages={fields.username} />
        </label>
        <label>
          Receiver password
          <input
            name="password"
            required
            autoComplete="off"
            value={values.password}
            onInput={(event) => set({ password: event.currentTarget.value })}
            aria-invalid={Boolean(fields.password)}
          />
          <FieldError messages={fields.password} />
        </label>
      </div>
      <label>
        Receives
        <select name="event" value={values.event} onChange={(event) => set({ event: event.currentTarget.value })}>
          <option value="payment.changed">payment.changed: every change of a payment</option>
          <option value="subscription.health">subscription.health: when another subscription fails, is disabled or recovers</option>
        </select>
        <FieldError messages={fields.event} />
      </label>
      <label>
        Filters <span class="muted small">(optional JSON, for example {'{"status": ["settled", "failed"], "amount_cents__gte": 100000}'})</span>
        <textarea
          name="filters"
          rows={2}
          class="mono"
          value={values.filters}
          onInput={(event) => set({ filters: event.currentTarget.value })}
          aria-invalid={Boolean(fields.filters)}
        />
        <FieldError messages={fields.filters} />
      </label>
      <fieldset>
        <legend>What each delivery carries, besides the payment's id</legend>
        <div class="checks">
          {FLAGS.map(([name, label]) => (
            <label class="check">
              <input
                type="checkbox"
                name={name}
                checked={values.flags[name]}
                onChange={(event) => set({ flags: { ...values.flags, [name]: event.currentTarget.checked } })}
              />
              {label}
            </label>
          ))}
        </div>
      </fieldset>
      <div class="form-actions">
        <button type="submit" disabled={busy}>
          {busy ? "Saving…" : submitLabel}
        </button>
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
