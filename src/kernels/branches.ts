import { evaluate, type Macros, type Truth, truthOf } from './conditions.js';
import type { Directive } from './tokenize.js';

// The #if groups open at a point in a source, innermost last, and how each directive moves them and the macros: what
// the preprocessor keeps of a kernel's declaration follows from the innermost branch's state.

/** A branch of an #if group: whether it is taken, whether an earlier one was, and how it reads in messages. */
export interface Frame {
  state: Truth;
  /** This branch's state with every enclosing one's, kept so that a token's region costs nothing at any depth. */
  combined: Truth;
  taken: Truth;
  text: string;
  readonly opening: string;
}

const both = (outer: Truth, inner: Truth): Truth =>
  outer === false || inner === false ? false : outer === null || inner === null ? null : true;

/** Moves the branch stack and the macros past one directive, as the preprocessor would. */
export function followDirective(item: Directive, frames: Frame[], macros: Macros, regionState: () => Truth): void {
  const top = frames[frames.length - 1];
  const outerFrame = frames[frames.length - 2];
  const outer = outerFrame ? outerFrame.combined : true;
  const ifValue = (): Truth => {
    if (item.name === 'ifdef' || item.name === 'ifndef') {
      const defined = macros.defined(item.tokens[0]?.text ?? '');
      return defined === null ? null : item.name === 'ifdef' ? defined : !defined;
    }
    return truthOf(evaluate(item.tokens, macros));
  };
  switch (item.name) {
    case 'if':
    case 'ifdef':
    case 'ifndef': {
      const value = ifValue();
      frames.push({
        state: value,
        combined: both(top ? top.combined : true, value),
        taken: value,
        text: `${item.text} (line ${item.line})`,
        opening: item.text,
      });
      return;
    }
    case 'elif':
    case 'elifdef':
    case 'elifndef': {
      if (!top) return;
      const value = item.name === 'elif' ? truthOf(evaluate(item.tokens, macros)) : ifValue();
      top.state = top.taken === true ? false : top.taken === null ? (value === false ? false : null) : value;
      top.taken = top.taken === true || value === true ? true : top.taken === null || value === null ? null : false;
      top.text = `${item.text} (line ${item.line}) after ${top.opening}`;
      top.combined = both(outer, top.state);
      return;
    }
    case 'else':
      if (!top) return;
      top.state = top.taken === true ? false : top.taken === null ? null : true;
      top.taken = true;
      top.text = `#else (line ${item.line}) of ${top.opening}`;
      top.combined = both(outer, top.state);
      return;
    case 'endif':
      frames.pop();
      return;
    case 'define': {
      const [name, ...rest] = item.tokens;
      // A function-like macro (NAME( with no space) is not a value an #if can use.
      if (name) macros.define(name.text, rest[0]?.text === '(' ? '' : rest.map((t) => t.text).join(' '), regionState());
      return;
    }
    case 'undef':
      if (item.tokens[0]) macros.undefine(item.tokens[0].text, regionState());
      return;
    default:
  }
}
