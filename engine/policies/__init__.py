"""Row policies and column masks, enforced in the SQL each query sends to its engine.

Outsiders use: ``applied_for`` (the rules binding a principal), ``AppliedPolicies``
(``describe()`` for the audit, ``key()`` for caches), ``PolicedQueries`` (a job's data
handle under them), ``check_rules`` (a PATCH's policies and masks against a schema),
``PolicyRefused`` and ``FilterRefused``; ``stored_policies`` (a stored dataset's rules
binding a principal, outside a job); ``policies_for_job`` (one line per rule applied to
a job, for the audit). docs/policies.md says what is promised.
"""
from engine.policies.applied import AppliedPolicies, PolicedQueries, applied_for, blank_quoted
from engine.policies.audit import policies_for_job
from engine.policies.checks import check_rules, check_statements
from engine.policies.filters import FilterRefused
from engine.policies.profiles import policed_profiles
from engine.policies.rewrite import PolicyRefused
from engine.policies.stored import StoredPolicies, stored_policies

__all__ = ["AppliedPolicies", "FilterRefused", "PolicedQueries", "PolicyRefused", "StoredPolicies",
           "applied_for", "blank_quoted", "check_rules", "check_statements", "policed_profiles",
           "policies_for_job", "stored_policies"]
