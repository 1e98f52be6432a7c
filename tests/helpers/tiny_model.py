"""A tiny random-weight Llama checkpoint that vLLM can serve from a local folder (nothing comes from a hub).

Its text is nonsense; what matters is the protocol: a BPE tokenizer (trained here with ``tokenizers``; WordPiece
breaks xgrammar), special tokens for a Hermes-style chat template with ``<tool_call>``, and a few MB of weights.
"""

from __future__ import annotations

import json
from pathlib import Path

CHAT_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n{{ messages[0]['content'] if messages[0]['role'] == 'system' else '' }}\n"
    'You may call tools. Tools: {{ tools | tojson }}\nCall one as <tool_call>{"name": ..., "arguments": ...}'
    "</tool_call>.<|im_end|>\n"
    "{%- elif messages[0]['role'] == 'system' %}<|im_start|>system\n{{ messages[0]['content'] }}<|im_end|>\n"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message['role'] == 'user' %}<|im_start|>user\n{{ message['content'] }}<|im_end|>\n"
    "{%- elif message['role'] == 'assistant' %}<|im_start|>assistant\n{{ message['content'] or '' }}"
    "{%- for call in message.get('tool_calls') or [] %}<tool_call>{\"name\": \"{{ call['function']['name'] }}\", "
    "\"arguments\": {{ call['function']['arguments'] }}}</tool_call>{%- endfor %}<|im_end|>\n"
    "{%- elif message['role'] == 'tool' %}<|im_start|>user\n<tool_response>{{ message['content'] }}"
    "</tool_response><|im_end|>\n"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}"
)
SPECIAL = [
    "<unk>",
    "<s>",
    "</s>",
    "<pad>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
]


def _corpus() -> list[str]:
    words = [
        "the",
        "employees",
        "who",
        "report",
        "to",
        "manager",
        "salary",
        "project",
        "department",
        "city",
        "budget",
        "hours",
        "name",
        "names",
        "list",
        "find",
        "sum",
        "average",
        "count",
        "total",
        "of",
        "and",
        "or",
        "in",
        "with",
        "for",
        "a",
        "an",
        "is",
        "are",
        "what",
        "which",
        "who",
        "how",
        "many",
        "tool",
        "call",
        "arguments",
        "function",
        "result",
        "error",
        "unavailable",
        "please",
        "try",
        "different",
        "retry",
        "answer",
        "json",
        "true",
        "false",
        "null",
    ]
    lines = [" ".join(words[i:] + words[:i]) for i in range(len(words))]
    lines += ['{"name": "f", "arguments": {"x": 1, "y": "z"}}', '[{"a": 1.5}, {"b": [1, 2, 3]}]'] * 20
    return lines


def build_tiny_model(folder: Path, vocab_size: int = 512, layers: int = 2, hidden: int = 128) -> Path:
    """Write config, safetensors weights, tokenizer and chat template to ``folder``; return it."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(_corpus(), trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="<|im_end|>",
        unk_token="<unk>",
        pad_token="<pad>",
        additional_special_tokens=SPECIAL[4:],
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        # head_dim 64: vLLM's CPU attention kernels do not take smaller heads
        num_attention_heads=hidden // 64,
        num_key_value_heads=1,
        max_position_embeddings=16384,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=True,
        torch_dtype="float32",
    )
    LlamaForCausalLM(config).save_pretrained(folder, safe_serialization=True)
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": fast.eos_token_id}))
    return folder


if __name__ == "__main__":
    import sys

    print(build_tiny_model(Path(sys.argv[1])))
