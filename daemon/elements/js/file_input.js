// What the target is as a file input: 0 none, 1 one file, 2 several (`multiple`).
(el) => el instanceof HTMLInputElement && el.type === 'file' ? (el.multiple ? 2 : 1) : 0
