"""The audit trail: who did what, when and why, for every moderator's and administrator's action.

``audit.services.audit_records`` (``audit_record`` for one entry) is the one writer of
``AuditEntry``. The services of the other
apps call it inside their own transactions (a decision and its entry commit together), the
admin's own log (``LogEntry``) is copied into it as it is written, and a staff account's
sign-in is recorded by a signal. Entries are read-only everywhere (the admin, the moderation
desk's *Audit trail*) and kept for ``AUDIT_KEEP_DAYS`` (at least a year); a daily task
deletes older ones. docs/security.md, "The audit trail", lists what is recorded.
"""
