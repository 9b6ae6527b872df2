"""The write side: the few audited writes the dashboard and the CLI may make to Mycel's files.

- rollback_writer.apply_checkpoint_copy: one new checkpoint through LangGraph's own saver;
- rollback_actions.apply_rollback: rollback, undo and summary deactivation (impact report first);
- config_files.apply_layer / apply_restore: a runtime.json layer replaced atomically, after a backup.

Their reads go through MycelReader like every other read; nothing on the read side imports this package.
"""
