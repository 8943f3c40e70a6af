"""The JSON schema of `jaxfix fix --output-format json` (draft 2020-12), for tools that read it.

A Python module rather than a .json file so that it ships in every install without package data;
`python -c "import json, jaxfix.report.fix_schema as s; print(json.dumps(s.SCHEMA))"` prints it.
"""

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://github.com/jaxfix/jaxfix/blob/main/jaxfix/report/fix_schema.json",
    "title": "jaxfix fix --output-format json",
    "type": "object",
    "required": [
        "version",
        "mode",
        "verify",
        "fixes",
        "files",
        "remaining",
        "summary",
        "errors"
    ],
    "additionalProperties": False,
    "properties": {
        "version": {
            "const": 1
        },
        "mode": {
            "enum": [
                "dry-run",
                "write"
            ]
        },
        "verify": {
            "type": "boolean"
        },
        "fixes": {
            "type": "array",
            "items": {
                "$ref": "#/$defs/appliedFix"
            }
        },
        "files": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "path",
                    "fixes",
                    "written",
                    "held_back",
                    "diff"
                ],
                "additionalProperties": False,
                "properties": {
                    "path": {
                        "type": "string"
                    },
                    "fixes": {
                        "type": "integer",
                        "minimum": 0
                    },
                    "written": {
                        "type": "boolean"
                    },
                    "held_back": {
                        "type": "boolean"
                    },
                    "diff": {
                        "type": "string"
                    }
                }
            }
        },
        "remaining": {
            "type": "array",
            "items": {
                "$ref": "#/$defs/finding"
            }
        },
        "summary": {
            "type": "object",
            "required": [
                "fixes",
                "verified",
                "mismatch",
                "unverifiable",
                "ineffective",
                "not_verified",
                "files_changed",
                "files_written",
                "remaining"
            ],
            "additionalProperties": {
                "type": "integer",
                "minimum": 0
            }
        },
        "errors": {
            "type": "array",
            "items": {
                "type": "string"
            }
        }
    },
    "$defs": {
        "pair": {
            "oneOf": [
                {
                    "type": "null"
                },
                {
                    "type": "array",
                    "minItems": 2,
                    "maxItems": 2,
                    "items": {
                        "type": [
                            "number",
                            "null"
                        ]
                    }
                }
            ]
        },
        "evidence": {
            "type": "object",
            "required": [
                "verdict",
                "detail",
                "input_source",
                "family",
                "headline",
                "notes",
                "inputs",
                "compiles",
                "time_per_call"
            ],
            "properties": {
                "verdict": {
                    "enum": [
                        "verified",
                        "mismatch",
                        "unverifiable",
                        "ineffective"
                    ]
                },
                "detail": {
                    "type": "string"
                },
                "input_source": {
                    "type": "string"
                },
                "family": {
                    "type": "string"
                },
                "headline": {
                    "type": "string"
                },
                "notes": {
                    "type": "array",
                    "items": {
                        "type": "string"
                    }
                },
                "inputs": {
                    "type": [
                        "integer",
                        "null"
                    ],
                    "minimum": 0
                },
                "compiles": {
                    "$ref": "#/$defs/pair"
                },
                "time_per_call": {
                    "$ref": "#/$defs/pair"
                }
            }
        },
        "fix": {
            "type": "object",
            "required": [
                "title",
                "safety",
                "edits",
                "imports",
                "evidence"
            ],
            "properties": {
                "title": {
                    "type": "string"
                },
                "safety": {
                    "enum": [
                        "safe",
                        "unsafe",
                        "manual"
                    ]
                },
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": [
                            "start",
                            "end",
                            "text"
                        ],
                        "properties": {
                            "start": {
                                "type": "integer"
                            },
                            "end": {
                                "type": "integer"
                            },
                            "text": {
                                "type": "string"
                            }
                        }
                    }
                },
                "imports": {
                    "type": "array",
                    "items": {
                        "type": "string"
                    }
                },
                "unused_imports": {
                    "description": "imports whose use the fix removed: drop each one nothing else in the file uses",
                    "type": "array",
                    "items": {
                        "type": "string"
                    }
                },
                "evidence": {
                    "oneOf": [
                        {
                            "type": "null"
                        },
                        {
                            "$ref": "#/$defs/evidence"
                        }
                    ]
                }
            }
        },
        "finding": {
            "type": "object",
            "required": [
                "code",
                "name",
                "path",
                "line",
                "column",
                "end_line",
                "end_column",
                "message",
                "fix"
            ],
            "properties": {
                "code": {
                    "type": "string",
                    "pattern": "^JAX[0-9]{3}$"
                },
                "name": {
                    "type": "string"
                },
                "path": {
                    "type": "string"
                },
                "cell": {
                    "description": "a notebook's cell (1-based, markdown cells counted), whose lines the positions count; null outside notebooks",
                    "type": [
                        "integer",
                        "null"
                    ],
                    "minimum": 1
                },
                "line": {
                    "type": "integer",
                    "minimum": 1
                },
                "column": {
                    "type": "integer",
                    "minimum": 1
                },
                "end_line": {
                    "type": "integer",
                    "minimum": 1
                },
                "end_column": {
                    "type": "integer",
                    "minimum": 1
                },
                "message": {
                    "type": "string"
                },
                "preview": {
                    "description": "reported in preview mode only (--preview): evidence of a kind that was mostly wrong on code nobody prepared",
                    "type": "boolean"
                },
                "fix": {
                    "oneOf": [
                        {
                            "type": "null"
                        },
                        {
                            "$ref": "#/$defs/fix"
                        }
                    ]
                }
            }
        },
        "appliedFix": {
            "allOf": [
                {
                    "$ref": "#/$defs/finding"
                },
                {
                    "type": "object",
                    "required": [
                        "written",
                        "held_back",
                        "fix"
                    ],
                    "properties": {
                        "written": {
                            "type": "boolean"
                        },
                        "held_back": {
                            "type": "boolean"
                        },
                        "fix": {
                            "$ref": "#/$defs/fix"
                        }
                    }
                }
            ]
        }
    }
}
