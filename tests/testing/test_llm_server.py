"""The test LLM server as real clients see it: the OpenAI SDK over HTTP, structured output
valid against its schema, tool calls on cue, SSE streaming, embeddings, the request log."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Literal

import jsonschema
import pytest
from pydantic import BaseModel, Field

from mnemometer.testing import (
    FakeLLMServer,
    ToolCall,
    ToolRule,
    instance,
    memory_block,
    recall,
    remember,
)
from mnemometer.testing._wire import decode_vector
from mnemometer.testing.llm_server import hash_embedding, last_user_message

openai = pytest.importorskip("openai")

MESSAGE = "My name is Darrin Smith and I live in Phoenix. I prefer Marriott over Hilton."


def sdk(srv):
    return openai.OpenAI(base_url=srv.base_url, api_key="sk-test", max_retries=0)


class Entity(BaseModel):
    name: str
    entity_type: Literal["Person", "Place", "Organization"]


class Extraction(BaseModel):
    entities: list[Entity]
    facts: list[str]
    summary: str | None = Field(description="optional")


# Shapes real memory systems ask for: Graphiti-style entities with an id, cognee-style
# graph with $defs and nullable unions, mem0-style facts.
GRAPH = {
    "type": "object",
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
            "required": ["id", "name"],
            "additionalProperties": False,
        },
        "Edge": {
            "type": "object",
            "properties": {
                "source_node_id": {"type": "string"},
                "target_node_id": {"type": "string"},
                "relationship_name": {"type": "string"},
                "weight": {"anyOf": [{"type": "number", "minimum": 0.5}, {"type": "null"}]},
            },
            "required": ["source_node_id", "target_node_id", "relationship_name"],
        },
    },
    "properties": {
        "nodes": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "minItems": 1},
        "edges": {"type": "array", "items": {"$ref": "#/$defs/Edge"}},
        "version": {"type": "integer", "exclusiveMinimum": 2},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "when": {"type": ["string", "null"], "format": "date-time"},
        "kind": {"const": "graph"},
        "extra": {"allOf": [{"properties": {"a": {"type": "string", "minLength": 3}}}]},
    },
    "required": ["nodes", "edges", "version", "kind"],
}
FACTS = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
}


@pytest.mark.parametrize("mode", ["minimal", "content"])
def test_json_schema_instances_parse_as_the_sdk_expects(mode):
    with FakeLLMServer(mode=mode) as srv:
        parsed = (
            sdk(srv)
            .chat.completions.parse(
                model=srv.model,
                messages=[{"role": "user", "content": MESSAGE}],
                response_format=Extraction,
            )
            .choices[0]
            .message.parsed
        )
    assert isinstance(parsed, Extraction)
    if mode == "minimal":  # a pipeline must survive an extraction that found nothing
        assert parsed == Extraction(entities=[], facts=[], summary=None)
    else:
        assert [e.name for e in parsed.entities] == [
            "Darrin Smith",
            "Phoenix",
            "Marriott",
            "Hilton",
        ]
        assert parsed.facts == [
            "My name is Darrin Smith and I live in Phoenix.",
            "I prefer Marriott over Hilton.",
        ]


@pytest.mark.parametrize("mode", ["minimal", "content"])
@pytest.mark.parametrize("schema", [GRAPH, FACTS, Extraction.model_json_schema()])
def test_generated_instances_validate(schema, mode):
    value = instance(schema, mode, MESSAGE)
    jsonschema.validate(value, schema)
    with FakeLLMServer(mode=mode) as srv:
        rf = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
        reply = sdk(srv).chat.completions.create(
            model=srv.model,
            messages=[{"role": "user", "content": MESSAGE}],
            response_format=rf,
        )
        jsonschema.validate(json.loads(reply.choices[0].message.content), schema)
        # llama.cpp's form: json_object with a schema
        body = {"type": "json_object", "schema": schema}
        reply = sdk(srv).chat.completions.create(
            model=srv.model, messages=[{"role": "user", "content": MESSAGE}], response_format=body
        )
        assert json.loads(reply.choices[0].message.content) == value


def test_content_mode_fills_graph_edges_from_entities():
    value = instance(GRAPH, "content", MESSAGE)
    assert [n["name"] for n in value["nodes"]][:2] == ["Darrin Smith", "Phoenix"]
    edge = value["edges"][0]
    assert edge["relationship_name"] == "My name is Darrin Smith and I live in Phoenix."
    assert value["version"] == 3 and value["kind"] == "graph" and len(value["extra"]["a"]) >= 3


def test_json_object_without_schema_and_scripted_mode():
    user = [{"role": "user", "content": MESSAGE}]
    with FakeLLMServer(mode="minimal") as srv:
        r = sdk(srv).chat.completions.create(
            model=srv.model, messages=user, response_format={"type": "json_object"}
        )
        assert r.choices[0].message.content == "{}"
    with FakeLLMServer(mode="content") as srv:
        r = sdk(srv).chat.completions.create(
            model=srv.model, messages=user, response_format={"type": "json_object"}
        )
        data = json.loads(r.choices[0].message.content)
        assert data["entities"][0] == "Darrin Smith" and len(data["facts"]) == 2
    # scripted (the default): a rule or the default answers, whatever was asked
    with FakeLLMServer(rules=[("Darrin", '{"ok": 1}')], default="not json") as srv:
        r = sdk(srv).chat.completions.create(
            model=srv.model, messages=user, response_format={"type": "json_object"}
        )
        assert r.choices[0].message.content == '{"ok": 1}'


def tool(name, *optional, **types):
    """An OpenAI function tool whose parameters have these JSON types, all but ``optional`` required."""
    props = {k: {"type": t} for k, t in types.items()}
    required = [k for k in types if k not in optional]
    params = {"type": "object", "properties": props, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": params}}


TOOLS = [
    tool(
        "memory_insert",
        "insert_line",
        label="string",
        new_string="string",
        insert_line="integer",
        request_heartbeat="boolean",
    ),
    tool("memory_replace", label="string", old_string="string", new_string="string"),
    tool("send_message", thinking="string", message="string"),
]


def after_call(messages, reply):
    """The conversation after the assistant's tool call and the tool's result."""
    call = reply.choices[0].message.tool_calls[0]
    return [
        *messages,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call.id, "content": '{"status": "OK"}'},
        {"role": "user", "content": json.dumps({"type": "heartbeat", "reason": "continue"})},
    ]


def test_tool_rules_step_through_a_turn():
    rule = ToolRule(
        "moved to",
        [
            ToolCall("memory_replace", {"label": "human", "old_string": "Phoenix"}),
            ("memory_insert", lambda body: {"label": "human", "new_string": "moved"}),
        ],
    )
    with FakeLLMServer(tool_rules=[rule], default="Done.") as srv:
        client = sdk(srv)
        messages = [{"role": "user", "content": "I moved to Tucson."}]
        r1 = client.chat.completions.create(
            model=srv.model, messages=messages, tools=TOOLS, tool_choice="auto"
        )
        assert r1.choices[0].finish_reason == "tool_calls"
        fn = r1.choices[0].message.tool_calls[0].function
        # a required argument the rule left out is generated ("" in minimal mode)
        assert fn.name == "memory_replace"
        assert json.loads(fn.arguments) == {
            "label": "human",
            "old_string": "Phoenix",
            "new_string": "",
        }
        messages = after_call(messages, r1)
        assert last_user_message({"messages": messages}) == "I moved to Tucson."  # not the event
        r2 = client.chat.completions.create(model=srv.model, messages=messages, tools=TOOLS)
        fn = r2.choices[0].message.tool_calls[0].function
        assert (fn.name, json.loads(fn.arguments)["request_heartbeat"]) == ("memory_insert", True)
        messages = after_call(messages, r2)
        r3 = client.chat.completions.create(model=srv.model, messages=messages, tools=TOOLS)
        assert r3.choices[0].message.content == "Done." and not r3.choices[0].message.tool_calls
        # "required": the reply goes out through the reply tool, with every required argument
        r4 = client.chat.completions.create(
            model=srv.model, messages=messages, tools=TOOLS, tool_choice="required"
        )
        fn = r4.choices[0].message.tool_calls[0].function
        assert fn.name == "send_message"
        assert list(json.loads(fn.arguments).items()) == [
            ("thinking", "Thinking it over."),
            ("message", "Done."),
        ]
        # a named function with no rule: arguments generated from its schema
        r5 = client.chat.completions.create(
            model=srv.model,
            messages=[{"role": "user", "content": "hello"}],
            tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "memory_insert"}},
        )
        fn = r5.choices[0].message.tool_calls[0].function
        jsonschema.validate(json.loads(fn.arguments), TOOLS[0]["function"]["parameters"])
        # no tools offered: the rule cannot fire
        r6 = client.chat.completions.create(model=srv.model, messages=messages[:1])
        assert r6.choices[0].message.content == "Done."
    assert [name for name, _ in srv.tool_calls()] == [
        "memory_replace",
        "memory_insert",
        "send_message",
        "memory_insert",
    ]


def test_streaming_text_and_tool_calls_with_usage():
    rule = ToolRule("remember", [ToolCall("memory_insert", {"label": "human", "new_string": "x"})])
    with FakeLLMServer(default="Darrin lives in Phoenix.", tool_rules=[rule]) as srv:
        client = sdk(srv)
        stream = client.chat.completions.create(
            model=srv.model,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == "Darrin lives in Phoenix." and len(chunks) > 4
        assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 4
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
        with client.chat.completions.stream(
            model=srv.model,
            messages=[{"role": "user", "content": "remember this"}],
            tools=TOOLS,
        ) as s:
            final = s.get_final_completion()
        call = final.choices[0].message.tool_calls[0]
        assert call.function.name == "memory_insert"
        assert json.loads(call.function.arguments)["new_string"] == "x"
        assert final.choices[0].finish_reason == "tool_calls"


def test_embeddings_float_base64_dimensions_and_models():
    with FakeLLMServer(embedding_models=["text-embedding-3-small"], embedding_dim=32) as srv:
        client = sdk(srv)
        # the SDK asks for base64 and decodes it
        vecs = client.embeddings.create(
            model="text-embedding-3-small", input=["Darrin lives in Phoenix", "a cat"]
        ).data
        assert [round(v, 6) for v in vecs[0].embedding] == [
            round(v, 6) for v in hash_embedding("Darrin lives in Phoenix", 32)
        ]
        raw = client.embeddings.create(
            model=srv.model, input="a cat", encoding_format="float", dimensions=8
        )
        assert len(raw.data[0].embedding) == 8
        assert srv.requests[0]["encoding_format"] == "base64"
        b64 = srv.answer_embeddings({"input": "a cat", "encoding_format": "base64"})
        assert decode_vector(b64["data"][0]["embedding"]) == pytest.approx(
            hash_embedding("a cat", 32)
        )
        assert [m.id for m in client.models.list()] == ["fake-llm"]  # chat models only
        assert client.models.retrieve("fake-llm").id == "fake-llm"
        with pytest.raises(openai.NotFoundError):
            client.embeddings.create(model="nope", input="x")


def test_request_log_in_memory_and_on_disk(tmp_path):
    log = tmp_path / "log.jsonl"
    with FakeLLMServer(default="hi", log_path=log) as srv:
        client = sdk(srv)
        client.chat.completions.create(model=srv.model, messages=[{"role": "user", "content": "a"}])
        client.embeddings.create(model=srv.model, input="b", encoding_format="float")
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [x["path"] for x in lines] == ["/v1/chat/completions", "/v1/embeddings"]
    assert lines[0]["response"]["choices"][0]["message"]["content"] == "hi"
    assert srv.log[0]["request"]["messages"][0]["content"] == "a" and srv.log[1]["status"] == 200


def test_latency_delays_each_chat_answer():
    import time

    with FakeLLMServer(default="hi", latency=0.2) as srv:
        t0 = time.perf_counter()
        reply = sdk(srv).chat.completions.create(
            model=srv.model, messages=[{"role": "user", "content": "a"}]
        )
        took = time.perf_counter() - t0
    assert reply.choices[0].message.content == "hi" and took >= 0.2


def letta_request(block, user, *extra):
    system = (
        "<memory_blocks>\n<human>\n<description>\nabout the user\n</description>\n<value>\n"
        f"{block}\n</value>\n</human>\n</memory_blocks>"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}, *extra]


def test_remember_and_recall_keep_a_memory_block():
    with FakeLLMServer(default=recall("human"), tool_rules=[remember("human")]) as srv:
        client = sdk(srv)
        msgs = letta_request("Name:", "My name is Darrin Smith and I live in Phoenix.")
        r = client.chat.completions.create(model=srv.model, messages=msgs, tools=TOOLS)
        args = json.loads(r.choices[0].message.tool_calls[0].function.arguments)
        assert args["new_string"] == "My name is Darrin Smith and I live in Phoenix."
        r = client.chat.completions.create(model=srv.model, messages=after_call(msgs, r))
        assert r.choices[0].message.content == "Noted."
        block = "Name:\nMy name is Darrin Smith and I live in Phoenix.\nI like tea."
        msgs = letta_request(block, "What is my name and city?")
        assert memory_block({"messages": msgs}) == block
        r = client.chat.completions.create(model=srv.model, messages=msgs, tools=TOOLS)
        assert not r.choices[0].message.tool_calls  # questions are not stored
        assert r.choices[0].message.content == "My name is Darrin Smith and I live in Phoenix."
        msgs = letta_request("Name:", "What is my name and city?")
        r = client.chat.completions.create(model=srv.model, messages=msgs)
        assert r.choices[0].message.content == "I don't know."


def test_module_main_serves_from_the_shell():
    p = subprocess.Popen(
        [sys.executable, "-m", "mnemometer.testing", "--port", "0", "--mode", "content"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = p.stdout.readline()
        url = line.split(" at ")[1].strip()
        client = openai.OpenAI(base_url=url, api_key="x", max_retries=0)
        r = client.chat.completions.create(
            model="fake-llm",
            messages=[{"role": "user", "content": MESSAGE}],
            response_format={"type": "json_object"},
        )
        assert json.loads(r.choices[0].message.content)["entities"][0] == "Darrin Smith"
    finally:
        p.terminate()
        p.wait(10)


@pytest.mark.slow
def test_minilm_embeddings():
    pytest.importorskip("sentence_transformers")
    with FakeLLMServer(embeddings="minilm") as srv:
        data = (
            sdk(srv)
            .embeddings.create(
                model=srv.model,
                input=["Where does Darrin live?", "Darrin lives in Phoenix", "tax forms"],
            )
            .data
        )
    q, near, far = (d.embedding for d in data)
    assert len(q) == 384
    dot = lambda a, b: sum(x * y for x, y in zip(a, b, strict=True))  # noqa: E731
    assert dot(q, near) > dot(q, far) + 0.2
