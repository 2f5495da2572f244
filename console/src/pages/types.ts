/** The API's records, as the console reads them. */
export interface Subscription {
  id: string;
  user: string;
  url: string;
  content_type: string;
  username: string | null;
  password: string | null;
  invoice_ids: boolean;
  payment_status: boolean;
  payment_events: boolean;
  refund_reason: boolean;
  instrument_number: boolean;
  all_payment_details: boolean;
  is_active: boolean;
  secret: string | null;
  secrets_readable: boolean;
  created_at: string;
  updated_at: string;
}

export interface Attempt {
  number: number;
  started_at: string;
  duration_ms: number | null;
  response_status: number | null;
  error: string | null;
  response_excerpt: string | null;
}

export interface Delivery {
  id: string;
  payment_id: string;
  event_id: string | null;
  status: "pending" | "succeeded" | "failed";
  attempts: Attempt[];
  body: string;
  created: string;
  updated: string;
  next_attempt_at: string | null;
  test: boolean;
  headers: Record<string, string> | null;
}

export interface Stats {
  window: string;
  attempts: number;
  succeeded: number;
  failed: number;
  pending: number;
  success_rate: number | null;
  p50_duration_ms: number | null;
  p95_duration_ms: number | null;
  series: { start: string; attempts: number; succeeded: number; failed: number; pending: number }[];
  last_attempt_at: string | null;
  last_success_at: string | null;
  failing_since: string | null;
  is_active: boolean;
}

export interface PaymentEvent {
  id: string;
  event_code: string;
  status: string;
  description: string;
  created: string;
}

export interface Payment {
  id: string;
  originating_counterparty_id: string;
  receiving_counterparty_id: string;
  invoices: { id: string; invoice_number: string; amount_cents: number }[];
  amount_cents: number;
  currency: string;
  payment_method: string;
  status: string;
  instrument_number: string | null;
  events: PaymentEvent[];
  refund_reason: string | null;
  created: string;
  updated: string;
}
