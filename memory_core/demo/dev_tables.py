"""The Postgres side tables Mycel dev uses next to its checkpoints (reference mycel-dev §3), as DDL we own.

Mycel dev keeps its live DDL outside its repository ("Supabase schema is managed outside request-time
DDL"), so these statements are ours, for tests and the demo. Column NAMES come from dev's repos'
selects and inserts (`storage/providers/supabase/*_repo.py`) and, for `agent.agent_configs`, from
`storage/schema/agent_config_resolved_config_hardcut.sql`. The live column TYPES are unverified; each
choice below follows what dev's code writes into the column and is commented where it is a judgement.
"""

from __future__ import annotations

# Schemas first: `agent` also holds LangGraph's checkpoint tables; `identity` holds users.
SCHEMAS_DDL = """
CREATE SCHEMA IF NOT EXISTS agent;
CREATE SCHEMA IF NOT EXISTS identity;
"""

# §3.2. created_at: dev sends `datetime.now().isoformat()` (naive local time); text keeps exactly what
# was sent, where timestamptz would silently reinterpret it in the session time zone. compacted_at: the
# repo does int(row["compacted_at"]) (a message count), so integer. Booleans: dev normalizes bool or
# 0/1 on read; boolean is the natural Postgres column.
SUMMARIES_DDL = """
CREATE TABLE IF NOT EXISTS agent.summaries (
    summary_id text PRIMARY KEY,
    thread_id text NOT NULL,
    summary_text text NOT NULL,
    compact_up_to_index integer NOT NULL,
    compacted_at integer NOT NULL,
    is_split_turn boolean NOT NULL DEFAULT false,
    split_turn_prefix text,
    is_active boolean NOT NULL DEFAULT true,
    created_at text NOT NULL
);
CREATE INDEX IF NOT EXISTS summaries_thread_active ON agent.summaries (thread_id, is_active, created_at);
"""

# §3.3. Times are UTC ISO strings from `_to_timestamptz`, so timestamptz; is_main is written as 0/1,
# so integer keeps exactly what is sent.
THREADS_DDL = """
CREATE TABLE IF NOT EXISTS agent.threads (
    id text PRIMARY KEY,
    agent_user_id text NOT NULL,
    owner_user_id text,
    current_workspace_id text,
    sandbox_type text DEFAULT 'local',
    model text,
    cwd text,
    status text,
    run_status text,
    is_main integer NOT NULL DEFAULT 0,
    branch_index integer NOT NULL DEFAULT 0,
    created_at timestamptz,
    updated_at timestamptz,
    last_active_at timestamptz
);
"""

# §3.3. Agents and humans are both users; next_thread_seq feeds `f"{agent_user_id}-{seq}"` thread ids.
USERS_DDL = """
CREATE TABLE IF NOT EXISTS identity.users (
    id text PRIMARY KEY,
    type text NOT NULL,
    display_name text NOT NULL,
    owner_user_id text,
    agent_config_id text,
    next_thread_seq integer NOT NULL DEFAULT 0,
    avatar text,
    email text,
    mycel_id text,
    created_by_user_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz
);
"""

# §3.3 / hard-cut SQL: the insert column list of `agent.save_agent_config`; the json columns' types,
# defaults and NOT NULL are the hard-cut file's own (the one place dev states types). compact_json is
# the per-agent memory override (§4.8).
AGENT_CONFIGS_DDL = """
CREATE TABLE IF NOT EXISTS agent.agent_configs (
    id text PRIMARY KEY,
    owner_user_id text NOT NULL,
    agent_user_id text NOT NULL,
    name text NOT NULL,
    description text NOT NULL DEFAULT '',
    model text,
    tools_json jsonb NOT NULL DEFAULT '["*"]',
    system_prompt text NOT NULL DEFAULT '',
    status text NOT NULL DEFAULT 'draft',
    version text NOT NULL,
    runtime_json jsonb NOT NULL DEFAULT '{}',
    compact_json jsonb NOT NULL DEFAULT '{}',
    meta_json jsonb NOT NULL DEFAULT '{}',
    mcp_json jsonb NOT NULL DEFAULT '[]',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
"""

# §3.4. sender_user_id, not main's sender_id. created_at: dev's repo lets the database stamp it when
# absent; timestamptz with a default.
MESSAGE_QUEUE_DDL = """
CREATE TABLE IF NOT EXISTS agent.message_queue (
    id bigserial PRIMARY KEY,
    thread_id text NOT NULL,
    content text NOT NULL,
    notification_type text NOT NULL DEFAULT 'steer',
    source text,
    sender_user_id text,
    sender_name text,
    created_at timestamptz NOT NULL DEFAULT now()
);
"""

# §3.5. seq is global and returned by the insert, so bigserial. data: dev sends json.dumps(...) — a
# JSON string — so text keeps it byte for byte (a reader must also accept a dict if the live column is
# jsonb; ours does).
RUN_EVENTS_DDL = """
CREATE TABLE IF NOT EXISTS agent.run_events (
    seq bigserial PRIMARY KEY,
    thread_id text NOT NULL,
    run_id text NOT NULL,
    event_type text NOT NULL,
    data text NOT NULL,
    message_id text,
    created_at timestamptz NOT NULL DEFAULT now()
);
"""

# §3.6. timestamp is a float epoch from time.time(), so double precision; changes is a list sent as
# JSON, so jsonb; checkpoint_id holds the web run id (dev checkpoints carry none).
FILE_OPERATIONS_DDL = """
CREATE TABLE IF NOT EXISTS agent.file_operations (
    id text PRIMARY KEY,
    thread_id text NOT NULL,
    checkpoint_id text NOT NULL,
    timestamp double precision NOT NULL,
    operation_type text NOT NULL,
    file_path text NOT NULL,
    before_content text,
    after_content text NOT NULL,
    changes jsonb,
    status text NOT NULL DEFAULT 'applied'
);
"""

ALL_DEV_SIDE_TABLES_DDL = (
    SCHEMAS_DDL,
    SUMMARIES_DDL,
    THREADS_DDL,
    USERS_DDL,
    AGENT_CONFIGS_DDL,
    MESSAGE_QUEUE_DDL,
    RUN_EVENTS_DDL,
    FILE_OPERATIONS_DDL,
)


def dev_side_tables_sql() -> str:
    """Every statement above, in order, as one script (idempotent: CREATE ... IF NOT EXISTS)."""
    return "\n".join(ALL_DEV_SIDE_TABLES_DDL)
