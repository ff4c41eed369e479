// Images pasted or dropped into the composer (issue 40): each a thumbnail chip with a remove
// button until the prompt is sent, then `shiro.chat`'s `images` ({mediaType, data, name}). The
// server checks, downscales and stores them (server/agent/images.py); here only the obvious is
// refused, with a line under the composer: not an image type the server takes, too large, too many.

export interface PastedImage {
  mediaType: string;
  data: string; // base64
  name: string;
}

/** What the server takes (server/agent/images.py MEDIA_TYPES, MAX_INPUT_BYTES, MAX_IMAGES). */
const TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const MAX_BYTES = 20 * 1024 * 1024;
export const MAX_IMAGES = 8;

interface Held extends PastedImage {
  url: string; // object URL of the thumbnail
}

export class ComposerImages {
  private held: Held[] = [];
  private readonly el: HTMLDivElement;
  private readonly warning: HTMLDivElement;

  constructor(
    before: HTMLElement,
    private readonly announce: (text: string) => void,
    private readonly changed: () => void,
  ) {
    this.el = document.createElement('div');
    this.el.className = 'image-chips';
    this.el.setAttribute('role', 'list');
    this.el.setAttribute('aria-label', 'Attached images');
    this.warning = document.createElement('div');
    this.warning.className = 'image-warning';
    this.warning.hidden = true;
    before.parentElement?.insertBefore(this.el, before);
    before.parentElement?.insertBefore(this.warning, before);
  }

  private warn(text: string): void {
    this.warning.textContent = text;
    this.warning.hidden = false;
    this.announce(text);
  }

  get count(): number {
    return this.held.length;
  }

  /** The images of a paste or a drop; true when it held any (the event's default is then not wanted). */
  take(data: DataTransfer | null): boolean {
    const files = [...(data?.files ?? [])].filter((f) => f.type.startsWith('image/'));
    if (!files.length) return false;
    this.warning.hidden = true;
    for (const file of files) void this.add(file);
    return true;
  }

  /** The images to send, and the composer cleared of them. */
  drain(): PastedImage[] {
    const out = this.held.map(({ mediaType, data, name }) => ({ mediaType, data, name }));
    for (const h of this.held) URL.revokeObjectURL(h.url);
    this.held = [];
    this.render();
    return out;
  }

  private async add(file: File): Promise<void> {
    const name = file.name && file.name !== 'image.png' ? file.name : 'pasted image';
    if (!TYPES.includes(file.type)) return this.warn(`${name}: ${file.type} is not sent; paste a PNG, JPEG, GIF or WebP image`);
    if (file.size > MAX_BYTES) return this.warn(`${name} is over ${MAX_BYTES / 1048576} MB; paste a smaller image`);
    if (this.held.length >= MAX_IMAGES) return this.warn(`at most ${MAX_IMAGES} images go with one prompt`);
    const data = await base64(file);
    this.held.push({ mediaType: file.type, data, name, url: URL.createObjectURL(file) });
    this.render();
    this.changed();
  }

  private render(): void {
    this.el.replaceChildren(
      ...this.held.map((image) => {
        const chip = document.createElement('span');
        chip.className = 'image-chip';
        chip.setAttribute('role', 'listitem');
        const img = document.createElement('img');
        img.src = image.url;
        img.alt = image.name;
        const label = document.createElement('span');
        label.className = 'image-name';
        label.textContent = image.name;
        const x = document.createElement('button');
        x.type = 'button';
        x.className = 'chip-remove';
        x.setAttribute('aria-label', `Remove image ${image.name}`);
        x.innerHTML = '<span class="codicon codicon-close" aria-hidden="true"></span>';
        x.addEventListener('click', () => {
          URL.revokeObjectURL(image.url);
          this.held = this.held.filter((h) => h !== image);
          this.render();
          this.changed();
        });
        chip.append(img, label, x);
        return chip;
      }),
    );
  }
}

function base64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}
