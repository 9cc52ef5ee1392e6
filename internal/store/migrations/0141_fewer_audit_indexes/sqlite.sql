-- Each index of audit_log and event_outbox is one more page written (one
-- more WAL frame on SQLite) by every audited change. Two served only the
-- retention purges: audit_log_ts (the audit purge now goes customer by
-- customer through audit_log_customer_ts) and event_outbox_ts (the event
-- purge now deletes the oldest ids, which are given in commit order, up
-- to the first event still within the 24 hours).
DROP INDEX audit_log_ts;
DROP INDEX event_outbox_ts;
