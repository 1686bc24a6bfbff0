"""A tiny tokenizer trained on the room's own text and a randomly initialised 2-layer model.

No model hub is reachable from tests: the tokenizer is a byte-level BPE trained with the
``tokenizers`` library on LiveRoom prompts, with Qwen's special tokens and TRL's copy of
the Qwen2.5 chat template (so TRL recognises it and parses ``<tool_call>`` blocks, and
veRL picks its Qwen token builder); the model is a ``Qwen2ForCausalLM`` of 2 layers and
width 32. Both are saved to a folder, as a hub checkpoint would be.
"""

from __future__ import annotations

from pathlib import Path

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>",
           "<tool_response>", "</tool_response>"]


def room_corpus(n: int = 6) -> list[str]:
    """Text the room produces: openings, tool schemas and a scripted stream's exchanges."""
    import json

    import gymnasium as gym

    import liveroom_sim  # noqa: F401
    from liveroom_sim.episode import play
    from liveroom_sim.policies.scripted import ScriptedAvatar

    env = gym.make("LiveRoom-v0")
    texts = []
    for seed in range(n):
        _, info = env.reset(seed=seed)
        texts += [m["content"] for m in info["messages"]]
        texts.append(json.dumps(info["tools"]))
    result = play(env, ScriptedAvatar(), 0, record=True)
    texts += [json.dumps(m, ensure_ascii=False) for m in result.messages[:400]]
    return texts


def build(folder: str | Path, vocab_size: int = 1500) -> Path:
    """Write the tokenizer and model to ``folder``; returns it."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen2_5_chat_template

    folder = Path(folder)
    bpe = Tokenizer(models.BPE(unk_token=None))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(room_corpus(), trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                  additional_special_tokens=[s for s in SPECIAL[3:] if "tool" not in s])
    tok.chat_template = qwen2_5_chat_template
    tok.save_pretrained(folder)
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=32768,
                         eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, tie_word_embeddings=True)
    Qwen2ForCausalLM(config).save_pretrained(folder)
    return folder
