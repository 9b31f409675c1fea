"""Extraction and classification prompts (English and Chinese).

Each prompt carries the JSON Schema of the reply model itself, so the instructions and
the validator are one thing (see :mod:`._schema`).
"""

from __future__ import annotations

import json
from typing import Any

from mnemometer.datasets.build._schema import Classification, Extraction, reply_schema

EXTRACT_SYSTEM = {
    "en": (
        "You extract atomic facts from a text for a memory benchmark. "
        "Answer with one JSON object that matches the schema, and nothing else."
    ),
    "zh": "你从文本中抽取原子事实，用于记忆评测。只输出一个符合 schema 的 JSON 对象，不要输出其他内容。",
}

EXTRACT_USER = {
    "en": """Extract every distinct fact from the text below.

Rules:
- content: one self-contained sentence of 10-30 words that names who did what; no pronouns
  whose referent is missing.
- person: the main person of the fact, full name as written; "" if none.
- location: a physical place only (a city, building, room). Eras, dynasties and abstract
  ideas are NOT locations; put eras in "era" and leave abstract ideas out.
- time: the specific time as the text says it ("31 July 1991", "the next morning"); "" if none.
- era: a period or dynasty if the text names one; "" if none.
- event_type: one or two lower-case words for the kind of event (meeting, battle, discovery).
- chain: the same short label on consecutive facts of one sequence where one leads to the
  next (because, so, after that, then); "" for a fact that stands alone.
- One fact per event; do not repeat a fact; keep the order of the text.

Category of the source: {category}

Schema:
{schema}

Text:
\"\"\"
{text}
\"\"\"""",
    "zh": """从下面的文本中抽取每一条不同的事实。

规则：
- content：一句完整独立的话（15-40 个汉字），写明谁做了什么；不要使用指代不明的代词。
- person：事实的主要人物，按原文写全名；没有则为 ""。
- location：只能是实际地点（城市、建筑、房间）。朝代、年代和抽象概念不是地点：朝代写入 "era"，抽象概念不要写。
- time：原文中的具体时间（"第三回"、"次日"、"1991年7月31日"）；没有则为 ""。
- era：原文提到的朝代或时期；没有则为 ""。
- event_type：用一两个词概括事件类型（会面、战斗、发现）。
- chain：一个事件导致下一个事件的连续事实（因为、所以、之后、随后）使用相同的简短标签；独立事实为 ""。
- 每个事件一条事实；不要重复；保持原文顺序。

来源类别：{category}

Schema：
{schema}

文本：
\"\"\"
{text}
\"\"\"""",
}

CLASSIFY_USER = {
    "en": """Each term below was given as the location of an event. Classify every term:
"place" for a physical location, "era" for a period, era or dynasty, "concept" for anything
else. Return one label per term, with the term exactly as given.

Schema:
{schema}

Terms:
{terms}""",
    "zh": """下面每个词都被当作某个事件的地点。请逐一分类：实际地点为 "place"，朝代、年代或时期为
"era"，其他为 "concept"。每个词返回一个标签，term 必须与原词完全一致。

Schema：
{schema}

词语：
{terms}""",
}

RETRY_USER = {
    "en": "Your reply was not valid: {error}. Answer again with only the JSON object that "
    "matches the schema.",
    "zh": "你的回答无效：{error}。请重新回答，只输出符合 schema 的 JSON 对象。",
}


def extraction_messages(text: str, category: str, lang: str) -> list[dict[str, Any]]:
    """Chat messages asking for the facts of one chunk."""
    schema = json.dumps(reply_schema(Extraction), ensure_ascii=False)
    user = EXTRACT_USER[lang].format(category=category or "-", schema=schema, text=text)
    return [{"role": "system", "content": EXTRACT_SYSTEM[lang]}, {"role": "user", "content": user}]


def classification_messages(terms: list[str], lang: str) -> list[dict[str, Any]]:
    """Chat messages asking for the kind of each location string."""
    schema = json.dumps(reply_schema(Classification), ensure_ascii=False)
    listed = "\n".join(f"- {t}" for t in terms)
    return [{"role": "user", "content": CLASSIFY_USER[lang].format(schema=schema, terms=listed)}]
