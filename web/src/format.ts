// How the dashboard writes numbers, one rule each, so every view (and the browser test, which
// applies the same rules to the API's answers) shows a figure the same way:
// - money and other decimal strings: as the API wrote them; sums and comparisons are exact
//   (BigInt on the digits, never floats); derived amounts the API keeps micro-exact (budget
//   remaining and projection, cost per unit gain, alert figures and the amounts in alert messages)
//   are shown at their currency's precision (USD and CNY: cents, half to even, docs/money.md:
//   currencyText, centsText), the exact figure in the tooltip where the page has one;
// - dates and times: dates.ts;
// - basis points and per-mille: as percentages by integer arithmetic (120 bp → "1.20%");
// - metric values (JSON numbers): 4 significant digits (metricText).

interface Dec {
  units: bigint; // the value × 10^scale
  scale: number;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

function parse(text: string): Dec {
  const m = DECIMAL.exec(text.trim());
  if (!m) throw new Error(`not a decimal: ${text}`);
  const frac = m[3] ?? "";
  const units = BigInt(m[2] + frac);
  return { units: m[1] ? -units : units, scale: frac.length };
}

function rescale(d: Dec, scale: number): bigint {
  return d.units * 10n ** BigInt(scale - d.scale);
}

function format(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** The exact sum of decimal strings, with the largest scale among them ("0" for none). */
export function decimalSum(values: string[]): string {
  const parsed = values.map(parse);
  const scale = Math.max(0, ...parsed.map((d) => d.scale));
  return format(parsed.reduce((sum, d) => sum + rescale(d, scale), 0n), scale);
}

/** Compares two decimal strings exactly: negative, zero or positive. */
export function decimalCompare(a: string, b: string): number {
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  const d = rescale(x, scale) - rescale(y, scale);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/** A decimal string to `scale` decimals, rounded half to even exactly. */
function roundText(text: string, scale: number): string {
  const d = parse(text);
  if (d.scale <= scale) return format(rescale(d, scale), scale);
  const div = 10n ** BigInt(d.scale - scale);
  const negative = d.units < 0n;
  const abs = negative ? -d.units : d.units;
  let q = abs / div;
  const r = abs % div;
  if (2n * r > div || (2n * r === div && q % 2n === 1n)) q += 1n;
  return format(negative ? -q : q, scale);
}

/** A decimal string to 2 decimals, rounded half to even exactly: "57666.550196" → "57666.55". */
export function centsText(text: string): string {
  return roundText(text, 2);
}

// The decimals a currency is shown with: its minor unit (cents, fen).
const CURRENCY_DECIMALS: Record<string, number> = { USD: 2, CNY: 2 };

/** Whether `code` is a currency the dashboard knows the precision of. */
export function isCurrency(code: string): boolean {
  return code in CURRENCY_DECIMALS;
}

/** An amount at its currency's precision, half to even: ("935.38895", "USD") → "935.39". */
export function currencyText(amount: string, currency: string): string {
  return roundText(amount, CURRENCY_DECIMALS[currency] ?? 2);
}

const MONEY_TEXT = /^(-?\d+(?:\.\d+)?) ([A-Z]{3})$/;

/** Text that is an amount with its currency ("935.38895 USD", a message argument) at the
 * currency's precision ("935.39 USD"); any other text as it is. */
export function moneyInText(text: string): string {
  const m = MONEY_TEXT.exec(text);
  return m && isCurrency(m[2]) ? `${currencyText(m[1], m[2])} ${m[2]}` : text;
}

/** Basis points as a percentage with two decimals: 120 → "1.20%"; null → "—". */
export function bpText(bp: number | null): string {
  return bp === null ? "—" : `${format(BigInt(bp), 2)}%`;
}

/** Per-mille as a percentage with one decimal: 973 → "97.3%"; null → "—". */
export function permilleText(permille: number | null): string {
  return permille === null ? "—" : `${format(BigInt(permille), 1)}%`;
}

/** A metric value or a ratio of them (JSON numbers): 4 significant digits, no trailing zeros; null → "—". */
export function metricText(value: number | null): string {
  return value === null ? "—" : String(Number(value.toPrecision(4)));
}

/** An integer that may be absent (minutes, percentages): the number, or "—". */
export function intText(value: number | null, unit = ""): string {
  return value === null ? "—" : `${value}${unit}`;
}

/** A GPU card as every view names it: the server's label ("node-7 #3", or "supplier/node-7 #3"
 *  where two suppliers' nodes in the answer share a name). */
export function cardLabel(c: { label: string }): string {
  return c.label;
}
