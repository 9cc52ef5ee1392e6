-- Global policies (decisions.md §11): one row per customer and policy type
-- (SNMP_POLICY, HOTSPOT_SSID_POLICY). body is the policy as JSON with its
-- secrets in clear; a customer with no row has the built-in default.
CREATE TABLE global_policies (
    customer_id BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    policy_type TEXT NOT NULL,
    body        TEXT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (customer_id, policy_type)
);
