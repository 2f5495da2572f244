export * from "./accounts";
export * from "./api-users";
export * from "./counterparties";
export * from "./invoices";
export * from "./list-counts";
export * from "./payment-events";
export * from "./payment-invoices";
export * from "./payments";
