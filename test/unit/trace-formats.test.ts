import { describeTraceFormats } from '../helpers/trace-formats.js';

// The list's contract over the product's formats; fixture-format.test.ts runs it again with a format added by a test.
describeTraceFormats();
