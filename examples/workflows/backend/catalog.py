"""What the backend knows before anyone writes a rule: its action types (with a JSON Schema for
their config and the output ports a run leaves by), trigger types and entities (with their
columns), plus the sample rules and alerts every new tenant starts with."""

from __future__ import annotations

from typing import Any

ACTION_TYPES: list[dict[str, Any]] = [
    {
        "name": "evaluate_condition",
        "description": "Compare a field of the record with a value. The flow continues on "
        "output-true or output-false.",
        "config_schema": {
            "type": "object",
            "properties": {
                "field": {"type": "string", "minLength": 1},
                "operator": {"enum": ["eq", "ne", "lt", "lte", "gt", "gte", "contains"]},
                "value": {},
            },
            "required": ["field", "operator", "value"],
            "additionalProperties": False,
        },
        "output_ports": [
            {"name": "output-true", "description": "The condition holds.", "is_default": True},
            {"name": "output-false", "description": "It does not.", "is_default": False},
        ],
    },
    {
        "name": "create_alert",
        "description": "Raise an alert in the recipients' inboxes. Use it to tell people "
        "something needs attention.",
        "config_schema": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1},
                "message": {"type": "string"},
                "severity": {"enum": ["low", "medium", "high", "critical"]},
                "recipients": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            },
            "required": ["title", "severity", "recipients"],
            "additionalProperties": False,
        },
        "output_ports": [
            {"name": "output-success", "description": "The alert was raised.", "is_default": True}
        ],
    },
    {
        "name": "send_email",
        "description": "Send an e-mail from a template. Recipients may use {{field}} placeholders.",
        "config_schema": {
            "type": "object",
            "properties": {
                "to": {"type": "string", "minLength": 1},
                "subject": {"type": "string", "minLength": 1},
                "body": {"type": "string"},
            },
            "required": ["to", "subject"],
            "additionalProperties": False,
        },
        "output_ports": [
            {"name": "output-success", "description": "Sent.", "is_default": True},
            {
                "name": "output-failure",
                "description": "The mail server refused.",
                "is_default": False,
            },
        ],
    },
    {
        "name": "update_field",
        "description": "Set a field of the record that triggered the rule. The change is "
        "saved at once.",
        "config_schema": {
            "type": "object",
            "properties": {"field": {"type": "string", "minLength": 1}, "value": {}},
            "required": ["field", "value"],
            "additionalProperties": False,
        },
        "output_ports": [{"name": "output-success", "description": "Saved.", "is_default": True}],
    },
    {
        "name": "create_purchase_order",
        "description": "Draft a purchase order to restock an item. A buyer approves it later.",
        "config_schema": {
            "type": "object",
            "properties": {
                "quantity": {"type": "integer", "minimum": 1},
                "supplier": {"type": "string"},
            },
            "required": ["quantity"],
            "additionalProperties": False,
        },
        "output_ports": [{"name": "output-success", "description": "Drafted.", "is_default": True}],
    },
]

TRIGGER_TYPES: list[dict[str, str]] = [
    {"name": "on_create", "description": "A record is created."},
    {"name": "on_update", "description": "A record is changed."},
    {"name": "on_delete", "description": "A record is deleted."},
    {"name": "manual", "description": "Someone runs the rule by hand."},
]

ENTITIES: list[dict[str, Any]] = [
    {
        "schema": "inventory",
        "name": "inventory_items",
        "description": "Stock kept per warehouse.",
        "columns": [
            ("id", "uuid"),
            ("sku", "text"),
            ("warehouse", "text"),
            ("quantity", "integer"),
            ("reorder_point", "integer"),
        ],
    },
    {
        "schema": "sales",
        "name": "orders",
        "description": "Customer orders.",
        "columns": [
            ("id", "uuid"),
            ("customer_id", "uuid"),
            ("status", "text"),
            ("total", "numeric"),
            ("placed_at", "timestamp"),
        ],
    },
    {
        "schema": "core",
        "name": "customers",
        "description": "People and companies who buy.",
        "columns": [("id", "uuid"), ("name", "text"), ("email", "text"), ("tier", "text")],
    },
    {
        "schema": "procurement",
        "name": "purchase_orders",
        "description": "Orders placed with suppliers.",
        "columns": [
            ("id", "uuid"),
            ("supplier", "text"),
            ("status", "text"),
            ("quantity", "integer"),
        ],
    },
]

SAMPLE_RULES: list[dict[str, Any]] = [
    {
        "name": "Large Order Review",
        "description": "Flag orders over 10,000 for a manager to review.",
        "entity": "sales.orders",
        "trigger_type": "on_create",
        "actions": [
            {
                "name": "Check Total",
                "action_type": "evaluate_condition",
                "config": {"field": "total", "operator": "gt", "value": 10000},
            },
            {
                "name": "Alert Managers",
                "action_type": "create_alert",
                "config": {
                    "title": "Large order to review",
                    "message": "An order over 10,000 was placed.",
                    "severity": "high",
                    "recipients": ["sales-managers"],
                },
            },
        ],
        "edges": [
            {"source_action": None, "target_action": "Check Total"},
            {
                "source_action": "Check Total",
                "target_action": "Alert Managers",
                "source_output": "output-true",
            },
        ],
    },
    {
        "name": "New Customer Welcome",
        "description": "Send new customers a welcome e-mail.",
        "entity": "core.customers",
        "trigger_type": "on_create",
        "actions": [
            {
                "name": "Welcome Email",
                "action_type": "send_email",
                "config": {"to": "{{email}}", "subject": "Welcome aboard"},
            }
        ],
        "edges": [{"source_action": None, "target_action": "Welcome Email"}],
    },
    {
        "name": "Order Shipped Notification",
        "description": "Tell the customer when an order ships (paused).",
        "entity": "sales.orders",
        "trigger_type": "on_update",
        "is_active": False,
        "actions": [
            {
                "name": "Is Shipped",
                "action_type": "evaluate_condition",
                "config": {"field": "status", "operator": "eq", "value": "shipped"},
            },
            {
                "name": "Shipping Email",
                "action_type": "send_email",
                "config": {"to": "{{customer.email}}", "subject": "Your order is on its way"},
            },
        ],
        "edges": [
            {"source_action": None, "target_action": "Is Shipped"},
            {
                "source_action": "Is Shipped",
                "target_action": "Shipping Email",
                "source_output": "output-true",
            },
        ],
    },
]

SAMPLE_ALERTS: list[dict[str, Any]] = [
    {
        "rule": "Large Order Review",
        "title": "Large order to review",
        "message": "Order 10482 from Globex totals 18,400.",
        "severity": "high",
        "status": "open",
        "others": [("sales-managers", "Sales managers")],
    },
    {
        "rule": "Large Order Review",
        "title": "Large order to review",
        "message": "Order 10467 from Initech totals 12,050.",
        "severity": "high",
        "status": "acknowledged",
        "others": [("sales-managers", "Sales managers")],
    },
]
